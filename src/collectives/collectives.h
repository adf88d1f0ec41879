// Collective operations over a transport::Context. Each algorithm lives in
// its own file; the functions here pick one by size (and, later, topology)
// from CollectiveOptions and run it.
//
// Conventions for every function:
// - `tag` identifies this operation; it must be unique among operations in
//   flight on the same context and the same on every rank.
// - `count` is in elements of `dtype`. `send` may equal `recv` (in place).
// - Every rank must call with the same count/dtype/op/root; the engine's
//   negotiation guarantees it, callers of this layer must.
// - Errors come as the exceptions of common/error.h, from the transport;
//   a counts vector whose length is not the size throws InvalidArgument
//   before any message. A Reduction must be valid for the dtype
//   (reduction_problem, checked where the engine takes it): an invalid one
//   is a bug and throws InternalError before any message.
// - Results are identical bit for bit on every rank.
// - Algorithms are chosen in collectives.cc; collectives/algorithms.h exposes
//   each one (tests force them from there).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/options.h"
#include "kolo/types.h"
#include "transport/context.h"

namespace kolo::collectives {

using transport::Context;
using transport::Tag;

// The factor applied to a reduced result: kAverage is a sum scaled by 1/n.
double result_scale(const Reduction& reduce, int size);

void allreduce(Context& ctx, Tag tag, const void* send, void* recv, size_t count, DataType dtype,
               const Reduction& reduce, const CollectiveOptions& options);

// Every rank contributes `count` elements; recv holds size*count elements
// ordered by rank. In place: send may point at this rank's block of recv, or
// equal recv (the block is moved to its place first).
void allgather(Context& ctx, Tag tag, const void* send, void* recv, size_t count, DataType dtype,
               const CollectiveOptions& options);

// Rank r contributes counts[r] elements; recv holds sum(counts) elements
// ordered by rank.
void allgatherv(Context& ctx, Tag tag, const void* send, void* recv,
                const std::vector<size_t>& counts, DataType dtype,
                const CollectiveOptions& options);

// `count` elements of `data` on `root` are copied into `data` on every rank.
// Throws InvalidArgument for a root outside [0, size).
void broadcast(Context& ctx, Tag tag, void* data, size_t count, DataType dtype, int root,
               const CollectiveOptions& options);

// Rank r sends block j (count elements) of send to rank j, and receives
// rank j's block r into block j of recv.
void alltoall(Context& ctx, Tag tag, const void* send, void* recv, size_t count, DataType dtype,
              const CollectiveOptions& options);

// send_counts[j] elements (at the running offset of send) go to rank j;
// recv_counts[j] elements arrive from rank j, packed in rank order in recv.
// send and recv may overlap (in place); the send side is then copied first.
void alltoallv(Context& ctx, Tag tag, const void* send, const std::vector<size_t>& send_counts,
               void* recv, const std::vector<size_t>& recv_counts, DataType dtype,
               const CollectiveOptions& options);

// The byte blocks of an alltoallv (packed in rank order on each side), once
// the counts pass alltoallv's checks (one entry per rank; what `rank` sends
// itself is what it expects from itself); else throws InvalidArgument.
// Other paths to alltoallv (shared memory) validate with it too.
struct AlltoallBlocks {
  std::vector<detail::ByteRange> send, recv;
};
AlltoallBlocks alltoallv_blocks(int size, int rank, const std::vector<size_t>& send_counts,
                                const std::vector<size_t>& recv_counts, DataType dtype);

// Reduces `count` elements across ranks; rank r receives its shard, shard r of
// even_shard(count, n, r) (common/even_shards.h): reduce_scatter_count(count, n, r)
// elements starting at reduce_scatter_offset(count, n, r). In place (send == recv), recv holds all
// count elements on entry (they are overwritten) and the shard is left at
// its start.
void reduce_scatter(Context& ctx, Tag tag, const void* send, void* recv, size_t count,
                    DataType dtype, const Reduction& reduce, const CollectiveOptions& options);
size_t reduce_scatter_count(size_t count, int size, int rank);
size_t reduce_scatter_offset(size_t count, int size, int rank);

// Returns once every rank has entered.
void barrier(Context& ctx, Tag tag, const CollectiveOptions& options);

}  // namespace kolo::collectives
