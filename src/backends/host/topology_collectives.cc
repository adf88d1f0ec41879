#include "backends/host/topology_collectives.h"

#include <cstring>

#include "collectives/algorithm_util.h"
#include "collectives/reduce/reduce.h"
#include "collectives/shm/shm_collectives.h"

namespace kolo::backends {
namespace {

using collectives::HierarchicalMode;

// The reduction proper: kAverage is a sum whose 1/n comes with the final
// scale (collectives::result_scale).
ReduceOp combine_op(ReduceOp op) {
  return op == ReduceOp::kAverage ? ReduceOp::kSum : op;
}

// Prescale needs a copy the algorithm may read; it goes into recv, which
// every path below accepts as input (in place).
const void* prescaled_input(const void* send, void* recv, size_t count, DataType dtype,
                            double prescale) {
  if (prescale == 1.0) return send;
  if (recv != send) std::memmove(recv, send, count * dtype_size(dtype));
  reduce::scale(recv, count, dtype, prescale);
  return recv;
}

std::byte* at(void* base, size_t offset) {
  return static_cast<std::byte*>(base) + offset;
}

}  // namespace

bool can_use_shm_alone(const HostTopology& topo) {
  return topo.shm && topo.single_host();
}

bool can_use_hierarchical(const HostTopology& topo, HierarchicalMode mode) {
  return mode != HierarchicalMode::kOff && topo.shm && topo.cross;
}

void shm_allreduce(HostTopology& topo, const void* send, void* recv, size_t count, DataType dtype,
                   const Reduction& reduce, int size,
                   const collectives::CollectiveOptions& options) {
  const void* input = prescaled_input(send, recv, count, dtype, reduce.prescale);
  collectives::shm::allreduce(*topo.shm, input, recv, count, dtype, combine_op(reduce.op),
                              collectives::result_scale(reduce, size), options.shm_small_bytes);
}

void shm_reduce_scatter(HostTopology& topo, const void* send, void* shard, size_t count,
                        DataType dtype, const Reduction& reduce, int size) {
  collectives::shm::reduce_scatter(*topo.shm, send, shard, count, dtype, combine_op(reduce.op),
                                   reduce.prescale, collectives::result_scale(reduce, size));
}

void shm_allreduce_parts(HostTopology& topo, const std::vector<FusedPart>& parts, DataType dtype,
                         const Reduction& reduce, int size) {
  collectives::shm::allreduce_parts(*topo.shm, parts, dtype, combine_op(reduce.op), reduce.prescale,
                                    collectives::result_scale(reduce, size));
}

void shm_adasum(HostTopology& topo, const std::vector<FusedPart>& parts, DataType dtype,
                const Reduction& reduce) {
  collectives::shm::adasum_allreduce(*topo.shm, parts, dtype, reduce);
}

void hierarchical_allreduce(HostTopology& topo, transport::Tag tag, const void* send, void* recv,
                            size_t count, DataType dtype, const Reduction& reduce, int size,
                            const collectives::CollectiveOptions& options) {
  const void* input = prescaled_input(send, recv, count, dtype, reduce.prescale);
  const ReduceOp op = combine_op(reduce.op);
  const Reduction across{op, 1.0, collectives::result_scale(reduce, size)};
  auto& group = *topo.shm;
  const size_t element = dtype_size(dtype);
  if (count * element < options.allreduce_ring_threshold) {
    // Latency path: every local rank gets the host's sum, then all of them
    // reduce it across hosts at once (the same inputs in the same order, so
    // the same bits), with no allgather afterwards.
    collectives::shm::allreduce(group, input, recv, count, dtype, op, 1.0, options.shm_small_bytes);
    collectives::allreduce(*topo.cross, tag, recv, recv, count, dtype, across, options);
    return;
  }
  // Bandwidth path: each local rank owns a shard of the host's sum and
  // reduces it with the same shard of every other host, over its own
  // connections, while the other local ranks do the same with theirs.
  const int n = group.size();
  const size_t shard_offset = collectives::reduce_scatter_offset(count, n, group.rank()) * element;
  const size_t shard_count = collectives::reduce_scatter_count(count, n, group.rank());
  collectives::shm::reduce_scatter(group, input, at(recv, shard_offset), count, dtype, op, 1.0,
                                   1.0);
  collectives::allreduce(*topo.cross, tag, at(recv, shard_offset), at(recv, shard_offset),
                         shard_count, dtype, across, options);
  std::vector<std::vector<ByteRange>> pieces(static_cast<size_t>(n));
  for (int j = 0; j < n; ++j) {
    pieces[j].push_back({collectives::reduce_scatter_offset(count, n, j) * element,
                         collectives::reduce_scatter_count(count, n, j) * element});
  }
  collectives::shm::allgather(group, recv, pieces);
}

void shm_allgatherv(HostTopology& topo, const void* send, void* recv,
                    const std::vector<ByteRange>& ranges) {
  std::vector<std::vector<ByteRange>> pieces;
  for (const ByteRange& range : ranges) pieces.push_back({range});
  collectives::shm::allgather(*topo.shm, recv, pieces, send);
}

void hierarchical_allgatherv(HostTopology& topo, transport::Tag tag, void* recv,
                             const std::vector<ByteRange>& ranges,
                             const collectives::CollectiveOptions& options) {
  // Across hosts first: this rank gathers the blocks of the ranks with its
  // local rank on every host (each local rank over its own connections, in
  // parallel); then the host shares what its local ranks gathered.
  std::vector<ByteRange> across;
  for (const auto& host : topo.hosts) across.push_back(ranges[host[topo.local_rank]]);
  collectives::detail::allgather_ring(*topo.cross, tag, recv, across, options.ring_chunk_bytes);
  std::vector<std::vector<ByteRange>> pieces(topo.hosts[topo.host].size());
  for (const auto& host : topo.hosts) {
    for (size_t m = 0; m < host.size(); ++m) pieces[m].push_back(ranges[host[m]]);
  }
  collectives::shm::allgather(*topo.shm, recv, pieces);
}

void shm_broadcast(HostTopology& topo, void* data, size_t bytes, int root) {
  // One host: local ranks are the group's ranks in order.
  collectives::shm::broadcast(*topo.shm, data, bytes, root);
}

void shm_alltoallv(HostTopology& topo, const void* send, const std::vector<ByteRange>& send_blocks,
                   void* recv, const std::vector<ByteRange>& recv_blocks) {
  const auto send_copy =
      collectives::detail::copy_if_overlapping(send, send_blocks, recv, recv_blocks);
  collectives::shm::alltoallv(*topo.shm, send_copy ? send_copy.get() : send, send_blocks, recv,
                              recv_blocks);
}

void shm_barrier(HostTopology& topo) {
  collectives::shm::barrier(*topo.shm);
}

}  // namespace kolo::backends
