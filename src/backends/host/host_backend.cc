#include "backends/host/host_backend.h"

#include <fmt/format.h>

#include <cstring>
#include <numeric>

#include "collectives/collectives.h"
#include "common/error.h"
#include "transport/sub_context.h"

namespace kolo::backends {
namespace {

collectives::ReduceSpec to_spec(const Reduction& reduction) {
  return {reduction.op, reduction.prescale, reduction.postscale};
}

bool is_even_split(const std::vector<size_t>& counts, size_t total) {
  int n = static_cast<int>(counts.size());
  for (int r = 0; r < n; ++r) {
    if (counts[static_cast<size_t>(r)] != collectives::reduce_scatter_count(total, n, r)) return false;
  }
  return true;
}

}  // namespace

HostBackend::HostBackend(std::shared_ptr<transport::Context> context,
                         collectives::CollectiveOptions options)
    : context_(std::move(context)), options_(options) {}

void HostBackend::allreduce(const void* send, void* recv, size_t count, DataType dtype,
                            const Reduction& reduction) {
  collectives::allreduce(*context_, next_tag(), send, recv, count, dtype, to_spec(reduction), options_);
}

void HostBackend::allgatherv(const void* send, void* recv, const std::vector<size_t>& counts,
                             DataType dtype) {
  collectives::allgatherv(*context_, next_tag(), send, recv, counts, dtype, options_);
}

void HostBackend::broadcast(void* data, size_t count, DataType dtype, int root) {
  collectives::broadcast(*context_, next_tag(), data, count, dtype, root, options_);
}

void HostBackend::alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                            const std::vector<size_t>& recv_counts, DataType dtype) {
  collectives::alltoallv(*context_, next_tag(), send, send_counts, recv, recv_counts, dtype, options_);
}

void HostBackend::reduce_scatterv(const void* send, void* recv, const std::vector<size_t>& counts,
                                  DataType dtype, const Reduction& reduction) {
  size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
  if (is_even_split(counts, total)) {
    collectives::reduce_scatter(*context_, next_tag(), send, recv, total, dtype, to_spec(reduction),
                                options_);
    return;
  }
  // Uneven shards (rows of a tensor whose first dimension does not divide
  // evenly) have no ring schedule yet: reduce everything, keep this rank's
  // part. Correct, at twice the traffic of a reduce-scatter.
  size_t element = dtype_size(dtype);
  std::vector<std::byte> whole(total * element);
  collectives::allreduce(*context_, next_tag(), send, whole.data(), total, dtype, to_spec(reduction),
                         options_);
  size_t offset = std::accumulate(counts.begin(), counts.begin() + rank(), size_t{0});
  std::memcpy(recv, whole.data() + offset * element, counts[static_cast<size_t>(rank())] * element);
}

void HostBackend::barrier() { collectives::barrier(*context_, next_tag(), options_); }

std::vector<std::string> HostBackend::gather_bytes(int root, const std::string& mine) {
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

void HostBackend::broadcast_bytes(int root, std::string& data) {
  uint64_t length = data.size();
  collectives::broadcast(*context_, next_tag(), &length, 1, DataType::kInt64, root, options_);
  data.resize(length);
  if (length > 0) {
    collectives::broadcast(*context_, next_tag(), data.data(), length, DataType::kUInt8, root, options_);
  }
}

void HostBackend::allreduce_and(std::vector<uint64_t>& words) {
  collectives::allreduce(*context_, next_tag(), words.data(), words.data(), words.size(),
                         DataType::kInt64, {ReduceOp::kBitAnd, 1.0, 1.0}, options_);
}

std::unique_ptr<Backend> HostBackend::subgroup(const std::vector<int>& ranks, uint32_t group_id) {
  std::vector<int> parent_ranks;
  parent_ranks.reserve(ranks.size());
  for (int r : ranks) {
    if (r < 0 || r >= size()) {
      throw InvalidArgument(fmt::format("rank {} is outside the group of {}", r, size()));
    }
    parent_ranks.push_back(r);
  }
  auto sub = std::make_shared<transport::SubContext>(context_, std::move(parent_ranks), group_id);
  return std::make_unique<HostBackend>(std::move(sub), options_);
}

}  // namespace kolo::backends
