// The individual algorithms behind collectives.h, one per file. collectives.cc
// picks among them and handles what is common (validation, size 1, count 0,
// copies, prescale/postscale); tests call them directly to force each one.
//
// Every function here expects size >= 2 and a non-empty operation, works on
// the caller's buffers, and sends every message of the operation with `tag`
// (messages between a pair with one tag arrive in send order, so phases of an
// operation never mix). Receives are posted before the matching sends.
#pragma once

#include <cstddef>
#include <vector>

#include "kolo/types.h"
#include "transport/context.h"

namespace kolo::collectives::detail {

using transport::Context;
using transport::Tag;

// A byte range of a buffer.
struct ByteRange {
  size_t offset = 0;
  size_t length = 0;
};

// Recursive doubling on `data` in place (count elements). With a size that
// is not a power of two, the first 2*(size - 2^k) ranks pair up: each even
// one folds its data into its odd partner, sits out the doubling rounds, and
// gets the result back at the end. Sends the whole buffer log2(size) times,
// so it is meant for small messages where latency dominates.
void allreduce_recursive_doubling(Context& ctx, Tag tag, void* data, size_t count, DataType dtype,
                                  ReduceOp op);

// Ring reduce-scatter and ring allgather as one chunked pipeline (a shard
// chunk starts its allgather as soon as it is reduced). `src` is this rank's
// contribution (may equal `dst`, or stays untouched when it does not); `dst`
// receives the reduction, multiplied by `postscale` (each shard is scaled
// once, by its owner, before the allgather). Ring steps are split into
// chunks of chunk_bytes so the transfer of one chunk overlaps the reduction
// of the previous one. Out of place, partial sums land directly in `dst`, so
// every receive is posted before any message can arrive.
void allreduce_ring(Context& ctx, Tag tag, const void* src, void* dst, size_t count, DataType dtype,
                    ReduceOp op, double postscale, size_t chunk_bytes);

// Ring reduce-scatter with the shard layout of reduce_scatter_count/offset:
// on return `shard_out` holds the reduction of this rank's shard. `src` (count
// elements) is read only; shard_out may be src + this rank's offset. Partial
// results travel through internal chunk buffers, so no scratch of the full
// size is needed.
void reduce_scatter_ring(Context& ctx, Tag tag, const void* src, void* shard_out, size_t count,
                         DataType dtype, ReduceOp op, size_t chunk_bytes);

// Ring allgather over byte segments of `data`, one per rank in rank order
// (lengths may differ, zeros included). On entry this rank's segment holds
// its data; on return every segment does.
void allgather_ring(Context& ctx, Tag tag, void* data, const std::vector<ByteRange>& segments,
                    size_t chunk_bytes);

// Binomial tree rooted at `root`: ceil(log2(size)) rounds, whole message.
void broadcast_tree(Context& ctx, Tag tag, void* data, size_t bytes, int root);

// Chain root -> root+1 -> ... in chunks of chunk_bytes, each rank forwarding
// a chunk as soon as it arrives, so every link of the chain is busy at once.
void broadcast_pipelined(Context& ctx, Tag tag, void* data, size_t bytes, int root,
                         size_t chunk_bytes);

// Block j of `send` goes to rank j, block j of `recv` comes from rank j;
// this rank's own block is copied locally. send and recv may overlap (the
// send side is then copied first).
void alltoallv_pairwise(Context& ctx, Tag tag, const void* send,
                        const std::vector<ByteRange>& send_blocks, void* recv,
                        const std::vector<ByteRange>& recv_blocks);

// Dissemination barrier: ceil(log2(size)) rounds of one-byte messages.
void barrier_dissemination(Context& ctx, Tag tag);

}  // namespace kolo::collectives::detail
