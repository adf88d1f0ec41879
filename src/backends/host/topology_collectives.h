// The collectives that use a HostTopology: shared memory alone when every
// rank is on one host, hierarchical (shared memory within hosts, TCP
// between) across hosts. HostBackend picks these or the flat TCP
// algorithms (src/collectives); see docs/architecture.md for the choice.
#pragma once

#include <cstddef>
#include <vector>

#include "backends/backend.h"
#include "backends/host/host_topology.h"
#include "collectives/algorithms.h"
#include "collectives/collectives.h"

namespace kolo::backends {

using collectives::detail::ByteRange;

// Whether the topology allows each path (options may still turn them off).
bool can_use_shm_alone(const HostTopology& topo);
bool can_use_hierarchical(const HostTopology& topo, collectives::HierarchicalMode mode);

// `size` is the whole group's (kAverage divides by it).
void shm_allreduce(HostTopology& topo, const void* send, void* recv, size_t count, DataType dtype,
                   const Reduction& reduce, int size,
                   const collectives::CollectiveOptions& options);
// A fused allreduce with each part read and written in place.
void shm_allreduce_parts(HostTopology& topo, const std::vector<FusedPart>& parts, DataType dtype,
                         const Reduction& reduce, int size);
// This rank's shard (the even layout of reduce_scatter_count/offset) of the
// reduction of count elements, into `shard`.
void shm_reduce_scatter(HostTopology& topo, const void* send, void* shard, size_t count,
                        DataType dtype, const Reduction& reduce, int size);
// Adasum through the host's segment (every rank on one host).
void shm_adasum(HostTopology& topo, const std::vector<FusedPart>& parts, DataType dtype,
                const Reduction& reduce);
void hierarchical_allreduce(HostTopology& topo, transport::Tag tag, const void* send, void* recv,
                            size_t count, DataType dtype, const Reduction& reduce, int size,
                            const collectives::CollectiveOptions& options);

// `ranges[r]`: rank r's block of recv; this rank's block holds its data,
// and so does `send` (unchanged since: the others may read it from there).
void shm_allgatherv(HostTopology& topo, const void* send, void* recv,
                    const std::vector<ByteRange>& ranges);
void hierarchical_allgatherv(HostTopology& topo, transport::Tag tag, void* recv,
                             const std::vector<ByteRange>& ranges,
                             const collectives::CollectiveOptions& options);

void shm_broadcast(HostTopology& topo, void* data, size_t bytes, int root);
// Blocks as collectives::alltoallv_blocks makes them; send and recv may overlap.
void shm_alltoallv(HostTopology& topo, const void* send, const std::vector<ByteRange>& send_blocks,
                   void* recv, const std::vector<ByteRange>& recv_blocks);
void shm_barrier(HostTopology& topo);

}  // namespace kolo::backends
