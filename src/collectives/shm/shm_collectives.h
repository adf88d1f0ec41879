// Collectives among the ranks of one host, through memory they share
// (transport/shared_memory_group.h). Every member calls with the same arguments;
// data moves through the members' staging slots in rounds, so any message
// size works with a fixed segment, and a round's copies overlap the peers'
// reading of the previous round (two slots per member).
//
// Results are identical bit for bit on every member: each element of a
// reduction is computed once, by one member, in a fixed order.
// Errors (a member gone, a timeout, an abort) poison the group and come as
// the exceptions of common/error.h.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/fused_part.h"
#include "kolo/types.h"
#include "transport/shared_memory_group.h"

namespace kolo::collectives::shm {

using detail::ByteRange;
using transport::SharedMemoryGroup;

// Messages up to this many bytes take the one-phase path: every member
// publishes its whole input and reduces all of them itself (one wait per
// operation instead of two per round). At most the slot size.
inline constexpr size_t kDefaultSmallBytes = 64 * 1024;

// out = op over the members' `in` (count elements), times postscale. `in`
// may equal `out`. Larger messages: each member copies the other members'
// shards of a round into its slot, reduces its own shard from every slot,
// and everyone copies the reduced shards out.
void allreduce(SharedMemoryGroup& group, const void* in, void* out, size_t count, DataType dtype,
               ReduceOp op, double postscale, size_t small_bytes);

// allreduce of the parts' concatenation, reading and writing each part in
// place: the copies into the slots and out of them are the only ones, so a
// fused allreduce needs no fusion buffer. `prescale` multiplies each input.
void allreduce_parts(SharedMemoryGroup& group, const std::vector<FusedPart>& parts, DataType dtype,
                     ReduceOp op, double prescale, double postscale);

// Like allreduce, but each member only gets its own shard (the layout of
// collectives::reduce_scatter_count/offset) of the count elements, in
// `shard` (reduce_scatter_count elements). `shard` may be where that shard
// lies in `in` (in place). `prescale` multiplies each input.
void reduce_scatter(SharedMemoryGroup& group, const void* in, void* shard, size_t count,
                    DataType dtype, ReduceOp op, double prescale, double postscale);

// pieces[m]: the byte ranges of `data` that member m holds on entry; on
// return every member holds all of them. Ranges of different members must
// not overlap. `source`, when set, holds this member's one piece as well
// (its send buffer, which it has copied into `data`): the others read it
// from there, where it is clean in the caches, rather than from the copy
// just written.
void allgather(SharedMemoryGroup& group, void* data,
               const std::vector<std::vector<ByteRange>>& pieces, const void* source = nullptr);

// `bytes` of `data` on member `root` are copied to every member.
void broadcast(SharedMemoryGroup& group, void* data, size_t bytes, int root);

// Member m sends send_blocks[j] (byte ranges of its `send`) to member j,
// which receives it at recv_blocks[m] of its `recv`. The lengths must
// agree pair by pair (a mismatch throws InvalidArgument naming both).
// `send` and `recv` must not overlap. Blocks of single_copy_bytes and more
// are read straight from the sender's buffer where the group allows it.
void alltoallv(SharedMemoryGroup& group, const void* send,
               const std::vector<ByteRange>& send_blocks, void* recv,
               const std::vector<ByteRange>& recv_blocks);

// Adasum (collectives/adasum/adasum.h: the same algorithm, arguments and
// bits) over the members, its exchanges through the slots. A group that is
// not a power of two is refused with InvalidArgument before any phase.
void adasum_allreduce(SharedMemoryGroup& group, const std::vector<FusedPart>& parts, DataType dtype,
                      const Reduction& reduce);

// Returns once every member has entered.
void barrier(SharedMemoryGroup& group);

}  // namespace kolo::collectives::shm
