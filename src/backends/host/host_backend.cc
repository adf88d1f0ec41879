#include "backends/host/host_backend.h"

#include <fmt/format.h>

#include <cstring>
#include <numeric>

#include "backends/host/topology_collectives.h"
#include "collectives/adasum/adasum.h"
#include "collectives/algorithm_util.h"
#include "collectives/collectives.h"
#include "common/error.h"
#include "transport/sub_context.h"

namespace kolo::backends {
namespace {

bool is_even_split(const std::vector<size_t>& counts, size_t total) {
  int n = static_cast<int>(counts.size());
  for (int r = 0; r < n; ++r) {
    if (counts[static_cast<size_t>(r)] != collectives::reduce_scatter_count(total, n, r))
      return false;
  }
  return true;
}

}  // namespace

HostBackend::HostBackend(std::shared_ptr<transport::Context> context,
                         collectives::CollectiveOptions options)
    : context_(std::move(context)), options_(options) {
  topology_.hosts = {{}};
}

HostBackend::HostBackend(std::shared_ptr<transport::Context> context,
                         collectives::CollectiveOptions options,
                         const transport::shm::ShmOptions& shm, int host_index, GroupScope scope)
    : context_(std::move(context)), options_(options), shm_options_(shm), host_index_(host_index) {
  if (context_->size() == 1) {
    topology_.hosts = {{0}};
    return;
  }
  // Three tags of the global sequence, the same on every rank.
  const transport::Tag first = next_tag();
  next_tag();
  next_tag();
  topology_ = discover_host_topology(context_, host_index, shm, first, scope);
  if (topology_.shm) name_ = "shm+tcp";
}

template <typename Body>
void HostBackend::on_shared_memory(Body&& body) {
  try {
    body();
  } catch (const std::exception& e) {
    context_->abort(e.what());
    throw;
  }
}

bool HostBackend::has_hierarchical_path() const {
  return topology_.shm != nullptr && topology_.cross != nullptr;
}

void HostBackend::set_hierarchical(bool allreduce, bool allgather) {
  using collectives::HierarchicalMode;
  options_.hierarchical_allreduce = allreduce ? HierarchicalMode::kOn : HierarchicalMode::kOff;
  options_.hierarchical_allgather = allgather ? HierarchicalMode::kOn : HierarchicalMode::kOff;
}

void HostBackend::abort(const std::string& reason) {
  if (topology_.shm) topology_.shm->abort(reason);
  context_->abort(reason);
}

void HostBackend::allreduce(const void* send, void* recv, size_t count, DataType dtype,
                            const Reduction& reduction) {
  const transport::Tag tag = next_tag();
  if (reduction.op == ReduceOp::kAdasum) {
    adasum({FusedPart{send, recv, count}}, dtype, reduction, tag);
    return;
  }
  // A forced algorithm (KOLO_ALLREDUCE_ALGORITHM) names a TCP one.
  if (count > 0 && options_.allreduce_algorithm == collectives::AllreduceAlgorithm::kAuto) {
    if (can_use_shm_alone(topology_)) {
      on_shared_memory(
          [&] { shm_allreduce(topology_, send, recv, count, dtype, reduction, size(), options_); });
      return;
    }
    if (can_use_hierarchical(topology_, options_.hierarchical_allreduce)) {
      on_shared_memory([&] {
        hierarchical_allreduce(topology_, tag, send, recv, count, dtype, reduction, size(),
                               options_);
      });
      return;
    }
  }
  collectives::allreduce(*context_, tag, send, recv, count, dtype, reduction, options_);
}

void HostBackend::adasum(const std::vector<FusedPart>& parts, DataType dtype,
                         const Reduction& reduction, transport::Tag tag) {
  if (can_use_shm_alone(topology_)) {
    // Refused before the segment is touched: a bad group size is the
    // caller's error, not a reason to abort the job's connections.
    if (const auto problem = collectives::adasum_size_problem(size()); !problem.empty())
      throw InvalidArgument(problem);
    on_shared_memory([&] { shm_adasum(topology_, parts, dtype, reduction); });
    return;
  }
  // Several hosts: the TCP mesh, also between the ranks of one host (the
  // algorithm's levels do not follow hosts).
  collectives::adasum_allreduce(*context_, tag, parts, dtype, reduction);
}

bool HostBackend::reduces_parts_in_place(DataType dtype, const Reduction& reduction) const {
  if (reduction.op == ReduceOp::kAdasum) return true;  // fused per tensor in adasum_allreduce
  return can_use_shm_alone(topology_) &&
         options_.allreduce_algorithm == collectives::AllreduceAlgorithm::kAuto;
}

void HostBackend::allreduce_parts(const std::vector<FusedPart>& parts, DataType dtype,
                                  const Reduction& reduction) {
  if (reduction.op == ReduceOp::kAdasum) {
    adasum(parts, dtype, reduction, next_tag());
    return;
  }
  if (!reduces_parts_in_place(dtype, reduction)) {
    Backend::allreduce_parts(parts, dtype, reduction);
    return;
  }
  if (parts.size() == 1) {
    // One tensor: the plain shared-memory allreduce (with its one-phase path
    // for small messages). A rank without the tensor (joined) contributes
    // zeros and discards the result, on the same path as everyone else.
    const FusedPart& part = parts[0];
    const size_t bytes = part.count * dtype_size(dtype);
    std::vector<std::byte> stand_in;
    if (part.input == nullptr || part.output == nullptr) stand_in.assign(bytes, std::byte{0});
    const void* input = part.input != nullptr ? part.input : stand_in.data();
    void* output = part.output != nullptr ? part.output : stand_in.data();
    allreduce(input, output, part.count, dtype, reduction);
    return;
  }
  on_shared_memory([&] { shm_allreduce_parts(topology_, parts, dtype, reduction, size()); });
}

void HostBackend::allgatherv(const void* send, void* recv, const std::vector<size_t>& counts,
                             DataType dtype) {
  const transport::Tag tag = next_tag();
  const bool shm_alone = can_use_shm_alone(topology_);
  const bool hierarchical = can_use_hierarchical(topology_, options_.hierarchical_allgather);
  if (counts.size() != static_cast<size_t>(size()) || (!shm_alone && !hierarchical)) {
    collectives::allgatherv(*context_, tag, send, recv, counts, dtype, options_);
    return;
  }
  std::vector<collectives::detail::ByteRange> ranges;
  size_t offset = 0;
  for (size_t c : counts) {
    ranges.push_back({offset, c * dtype_size(dtype)});
    offset += ranges.back().length;
  }
  const auto& own = ranges[static_cast<size_t>(rank())];
  auto* own_block = static_cast<std::byte*>(recv) + own.offset;
  if (own.length > 0 && own_block != send) std::memmove(own_block, send, own.length);
  // A send buffer inside recv may have been overwritten by that move.
  const bool send_intact =
      send == own_block || !collectives::detail::ranges_overlap(send, own.length, recv, offset);
  on_shared_memory([&] {
    if (shm_alone) {
      shm_allgatherv(topology_, send_intact ? send : own_block, recv, ranges);
    } else {
      hierarchical_allgatherv(topology_, tag, recv, ranges, options_);
    }
  });
}

void HostBackend::broadcast(void* data, size_t count, DataType dtype, int root) {
  const transport::Tag tag = next_tag();
  if (can_use_shm_alone(topology_) && root >= 0 && root < size() &&
      options_.broadcast_algorithm == collectives::BroadcastAlgorithm::kAuto) {
    on_shared_memory([&] { shm_broadcast(topology_, data, count * dtype_size(dtype), root); });
    return;
  }
  collectives::broadcast(*context_, tag, data, count, dtype, root, options_);
}

void HostBackend::alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                            const std::vector<size_t>& recv_counts, DataType dtype) {
  const transport::Tag tag = next_tag();
  if (can_use_shm_alone(topology_)) {
    const auto blocks =
        collectives::alltoallv_blocks(size(), rank(), send_counts, recv_counts, dtype);
    on_shared_memory([&] { shm_alltoallv(topology_, send, blocks.send, recv, blocks.recv); });
    return;
  }
  collectives::alltoallv(*context_, tag, send, send_counts, recv, recv_counts, dtype, options_);
}

void HostBackend::reduce_scatterv(const void* send, void* recv, const std::vector<size_t>& counts,
                                  DataType dtype, const Reduction& reduction) {
  size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  if (is_even_split(counts, total)) {
    const transport::Tag tag = next_tag();
    if (total > 0 && can_use_shm_alone(topology_)) {
      on_shared_memory(
          [&] { shm_reduce_scatter(topology_, send, recv, total, dtype, reduction, size()); });
      return;
    }
    collectives::reduce_scatter(*context_, tag, send, recv, total, dtype, reduction, options_);
    return;
  }
  // Uneven shards (rows of a tensor whose first dimension does not divide
  // evenly) have no ring schedule yet: reduce everything (on whatever path
  // allreduce takes), keep this rank's part. Correct, at twice the traffic
  // of a reduce-scatter.
  size_t element = dtype_size(dtype);
  const auto whole =
      collectives::detail::scratch_bytes(total * element);  // the allreduce writes all of it
  allreduce(send, whole.get(), total, dtype, reduction);
  size_t offset = std::accumulate(counts.begin(), counts.begin() + rank(), size_t{0});
  std::memcpy(recv, whole.get() + offset * element, counts[static_cast<size_t>(rank())] * element);
}

void HostBackend::barrier() {
  const transport::Tag tag = next_tag();
  if (can_use_shm_alone(topology_)) {
    on_shared_memory([&] { shm_barrier(topology_); });
    return;
  }
  collectives::barrier(*context_, tag, options_);
}

// The control plane takes the same paths as the data: on one host the
// engine's per-cycle negotiation (allreduce_and) costs one shared-memory
// phase instead of messages over loopback TCP.
std::vector<std::string> HostBackend::gather_bytes(int root, const std::string& mine) {
  if (can_use_shm_alone(topology_)) return gather_bytes_on_host(root, mine);
  transport::Tag tag = next_tag();
  std::vector<std::string> all;
  if (rank() != root) {
    // Length first, then the bytes: messages between two ranks with one tag
    // arrive in send order.
    uint64_t length = mine.size();
    auto header = context_->isend(root, tag, &length, sizeof(length));
    if (length > 0) context_->send(root, tag, mine.data(), mine.size());
    header->wait();
    return all;
  }
  all.resize(static_cast<size_t>(size()));
  std::vector<uint64_t> lengths(all.size(), 0);
  std::vector<std::unique_ptr<transport::Request>> headers(all.size());
  for (int peer = 0; peer < size(); ++peer) {
    if (peer != root) headers[peer] = context_->irecv(peer, tag, &lengths[peer], sizeof(uint64_t));
  }
  all[static_cast<size_t>(root)] = mine;
  for (int peer = 0; peer < size(); ++peer) {
    if (peer == root) continue;
    headers[peer]->wait();
    all[peer].resize(lengths[peer]);
    if (lengths[peer] > 0) context_->recv(peer, tag, all[peer].data(), lengths[peer]);
  }
  return all;
}

std::vector<std::string> HostBackend::gather_bytes_on_host(int root, const std::string& mine) {
  // Everyone gathers everything (two shared-memory allgathers: lengths,
  // then bytes); only root keeps it.
  const size_t n = static_cast<size_t>(size());
  std::vector<uint64_t> lengths(n, 0);
  const uint64_t length = mine.size();
  allgatherv(&length, lengths.data(), std::vector<size_t>(n, 1), DataType::kInt64);
  const std::vector<size_t> counts(lengths.begin(), lengths.end());
  std::string joined(std::accumulate(counts.begin(), counts.end(), size_t{0}), '\0');
  allgatherv(mine.data(), joined.data(), counts, DataType::kUInt8);
  if (rank() != root) return {};
  std::vector<std::string> all;
  size_t offset = 0;
  for (size_t c : counts) {
    all.push_back(joined.substr(offset, c));
    offset += c;
  }
  return all;
}

void HostBackend::broadcast_bytes(int root, std::string& data) {
  int64_t length = static_cast<int64_t>(data.size());
  broadcast(&length, 1, DataType::kInt64, root);
  data.resize(static_cast<size_t>(length));
  if (length > 0) broadcast(data.data(), static_cast<size_t>(length), DataType::kUInt8, root);
}

void HostBackend::allreduce_and(std::vector<uint64_t>& words) {
  allreduce(words.data(), words.data(), words.size(), DataType::kInt64,
            {ReduceOp::kBitAnd, 1.0, 1.0});
}

std::unique_ptr<Backend> HostBackend::subgroup(const std::vector<int>& ranks, uint32_t group_id) {
  if (group_id == kCrossHostGroupId)
    throw InvalidArgument(
        fmt::format("group id {} is reserved for the cross-host context", group_id));
  std::vector<int> parent_ranks;
  parent_ranks.reserve(ranks.size());
  for (int r : ranks) {
    if (r < 0 || r >= size()) {
      throw InvalidArgument(fmt::format("rank {} is outside the group of {}", r, size()));
    }
    parent_ranks.push_back(r);
  }
  auto sub = std::make_shared<transport::SubContext>(context_, std::move(parent_ranks), group_id);
  if (!shm_options_) return std::make_unique<HostBackend>(std::move(sub), options_);
  return std::make_unique<HostBackend>(std::move(sub), options_, *shm_options_, host_index_,
                                       GroupScope::kProcessSet);
}

}  // namespace kolo::backends
