// Adasum's vector-halving distance-doubling (see adasum.h for the shape of
// the algorithm). Positions and counts are in elements; a rank's "window" is
// the part of the fused buffer it is responsible for at the current level.
#include "collectives/adasum/adasum.h"

#include <fmt/format.h>

#include <cstring>
#include <numeric>
#include <utility>

#include "collectives/adasum/adasum_kernels.h"
#include "collectives/adasum/adasum_links.h"
#include "collectives/algorithm_util.h"
#include "collectives/reduce/reduce.h"
#include "common/check.h"
#include "common/error.h"

namespace kolo::collectives {
namespace {

using transport::Context;
using transport::Tag;
// Elements of each tensor inside a window, in buffer order.
using Counts = std::vector<size_t>;

// Horovod's guard: a (near) zero vector keeps coefficient 1, so adding a
// zero contribution changes nothing.
constexpr double kMinNormSq = 1e-8;

double coefficient(double dot, double norm_sq) {
  return norm_sq >= kMinNormSq ? 1.0 - dot / norm_sq * 0.5 : 1.0;
}

// The per-tensor counts of a window cut at element `boundary`: those of the
// part before it and of the part from it on.
std::pair<Counts, Counts> split_at(const Counts& counts, size_t boundary) {
  Counts front(counts.size(), 0), back(counts.size(), 0);
  size_t start = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const size_t before = boundary > start ? std::min(counts[i], boundary - start) : 0;
    front[i] = before;
    back[i] = counts[i] - before;
    start += counts[i];
  }
  return {std::move(front), std::move(back)};
}

// Point-to-point messages: any transport, any backend. Every call of an
// operation uses its one tag; messages between a pair stay in order.
class ContextLinks final : public adasum::Links {
 public:
  ContextLinks(Context& ctx, Tag tag) : ctx_(ctx), tag_(tag) {}
  int rank() const override { return ctx_.rank(); }
  int size() const override { return ctx_.size(); }

  // Both sides know both lengths, so an empty direction is skipped on both.
  void exchange(int peer, const void* send, size_t send_bytes, void* recv, size_t recv_bytes,
                size_t /*bound_bytes*/) override {
    std::unique_ptr<transport::Request> received, sent;
    if (recv_bytes > 0) received = ctx_.irecv(peer, tag_, recv, recv_bytes);
    if (send_bytes > 0) sent = ctx_.isend(peer, tag_, send, send_bytes);
    if (sent) sent->wait();
    if (received) received->wait();
  }

  // Recursive doubling: the two partners of each step add the same two
  // vectors in opposite order, which gives the same bits.
  void sum_within_group(std::vector<double>& values, int group) override {
    const size_t bytes = values.size() * sizeof(double);
    std::vector<double> theirs(values.size());
    for (int distance = 1; distance < group; distance <<= 1) {
      exchange(ctx_.rank() ^ distance, values.data(), bytes, theirs.data(), bytes, bytes);
      for (size_t i = 0; i < values.size(); ++i) values[i] += theirs[i];
    }
  }

 private:
  Context& ctx_;
  Tag tag_;
};

// One level's combination: `mine` (the half this rank kept) becomes
// adasum(mine, theirs) tensor by tensor, with the dot products and norms
// summed over the `group` ranks that hold the two vectors between them.
// `left` says whether this rank's vector is the pair's left operand; the
// norms are exchanged as (left, right) so every member reads the same ones.
void combine_halves(adasum::Links& links, std::byte* mine, const std::byte* theirs,
                    const Counts& counts, DataType dtype, bool left, int group) {
  const size_t element = dtype_size(dtype);
  std::vector<double> sums(3 * counts.size());
  size_t offset = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const auto s = adasum::dot_and_norms(mine + offset, theirs + offset, counts[i], dtype);
    sums[3 * i] = s.dot;
    sums[3 * i + 1] = left ? s.a_norm_sq : s.b_norm_sq;
    sums[3 * i + 2] = left ? s.b_norm_sq : s.a_norm_sq;
    offset += counts[i] * element;
  }
  links.sum_within_group(sums, group);
  offset = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    const double dot = sums[3 * i];
    const double mine_sq = left ? sums[3 * i + 1] : sums[3 * i + 2];
    const double theirs_sq = left ? sums[3 * i + 2] : sums[3 * i + 1];
    adasum::scaled_add(mine + offset, coefficient(dot, mine_sq), theirs + offset,
                       coefficient(dot, theirs_sq), counts[i], dtype);
    offset += counts[i] * element;
  }
}

// The most elements any rank sends or receives in one exchange at `level`
// (both going down and coming back): windows are halved with the larger
// half second, so after k halvings none is longer than ceil(total / 2^k).
size_t exchange_bound(size_t total, int level) {
  const size_t parts = 2 * static_cast<size_t>(level);
  return (total + parts - 1) / parts;
}

// Adasum of every rank's `data` (the fused tensors, `counts` each), in place.
void halve_and_double(adasum::Links& links, std::byte* data, Counts counts, DataType dtype) {
  const int rank = links.rank();
  const int size = links.size();
  const size_t element = dtype_size(dtype);
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  // The largest half a rank ever receives is the first level's.
  auto incoming = detail::scratch_bytes((total - total / 2) * element);
  size_t begin = 0, mine = total;
  std::vector<size_t> handed_over;  // per level, the elements the partner took
  for (int level = 1; level < size; level <<= 1) {
    const int peer = rank ^ level;
    const bool left = (rank & level) == 0;
    const size_t first = mine / 2, second = mine - first;
    const size_t bound = exchange_bound(total, level) * element;
    auto [front, back] = split_at(counts, first);
    std::byte* window = data + begin * element;
    if (left) {  // keeps the first half
      links.exchange(peer, window + first * element, second * element, incoming.get(),
                     first * element, bound);
      counts = std::move(front);
      mine = first;
      handed_over.push_back(second);
    } else {
      links.exchange(peer, window, first * element, incoming.get(), second * element, bound);
      counts = std::move(back);
      begin += first;
      mine = second;
      handed_over.push_back(first);
    }
    combine_halves(links, data + begin * element, incoming.get(), counts, dtype, left, 2 * level);
  }
  // Gather back: at each level the partner's window sits right after this
  // one's (left) or right before it (right).
  for (int level = size / 2; level >= 1; level >>= 1) {
    const int peer = rank ^ level;
    const size_t theirs = handed_over.back();
    handed_over.pop_back();
    const size_t their_begin = (rank & level) == 0 ? begin + mine : begin - theirs;
    links.exchange(peer, data + begin * element, mine * element, data + their_begin * element,
                   theirs * element, exchange_bound(total, level) * element);
    begin = std::min(begin, their_begin);
    mine += theirs;
  }
}

}  // namespace

bool adasum_size_supported(int size) {
  return size > 0 && (size & (size - 1)) == 0;
}

std::string adasum_size_problem(int size) {
  if (adasum_size_supported(size)) return "";
  return fmt::format(
      "Adasum needs a power-of-two number of ranks, as in Horovod; this group has {} ranks", size);
}

void adasum_allreduce(Context& ctx, Tag tag, const std::vector<FusedPart>& parts, DataType dtype,
                      const Reduction& reduce) {
  KOLO_CHECK_MSG(reduce.op == ReduceOp::kAdasum && is_floating(dtype),
                 "adasum_allreduce called for {} on {}", reduce_op_name(reduce.op),
                 dtype_name(dtype));
  if (const auto problem = adasum_size_problem(ctx.size()); !problem.empty()) {
    throw InvalidArgument(problem);
  }
  ContextLinks links(ctx, tag);
  adasum::allreduce_over(links, parts, dtype, reduce);
}

void adasum::allreduce_over(Links& links, const std::vector<FusedPart>& parts, DataType dtype,
                            const Reduction& reduce) {
  KOLO_CHECK_MSG(
      reduce.op == ReduceOp::kAdasum && is_floating(dtype) && adasum_size_supported(links.size()),
      "adasum called for {} on {}, {} ranks", reduce_op_name(reduce.op), dtype_name(dtype),
      links.size());
  const size_t element = dtype_size(dtype);
  Counts counts;
  for (const auto& part : parts) counts.push_back(part.count);
  const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  if (total == 0) return;

  // One tensor with an output is reduced in that output; several are
  // fused into one buffer (the halving runs across tensor boundaries).
  const bool in_output = parts.size() == 1 && parts[0].output != nullptr;
  std::unique_ptr<std::byte[]> fused;
  std::byte* data = nullptr;
  if (in_output) {
    data = static_cast<std::byte*>(parts[0].output);
  } else {
    fused = detail::scratch_bytes(total * element);
    data = fused.get();
  }
  size_t offset = 0;
  for (const auto& part : parts) {
    const size_t bytes = part.count * element;
    if (part.input == nullptr) {
      std::memset(data + offset, 0, bytes);
    } else if (part.input != data + offset) {
      std::memmove(data + offset, part.input, bytes);
    }
    offset += bytes;
  }
  reduce::scale(data, total, dtype, reduce.prescale);
  if (links.size() > 1) halve_and_double(links, data, counts, dtype);
  reduce::scale(data, total, dtype, reduce.postscale);
  if (in_output) return;
  offset = 0;
  for (const auto& part : parts) {
    const size_t bytes = part.count * element;
    if (part.output != nullptr && bytes > 0) std::memcpy(part.output, data + offset, bytes);
    offset += bytes;
  }
}

}  // namespace kolo::collectives
