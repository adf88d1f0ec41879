// Shared-memory allreduce and reduce-scatter (see shm_collectives.h).
//
// A round covers, for every member j, chunk k of shard j (E elements). Its
// phases, each ended by advance():
//   1. copy: member r puts chunk k of every shard j != r of its input into
//      sub-block j of its slot (its own shard it reads from its input);
//   2. reduce: r combines its input's chunk of shard r with sub-block r of
//      every other member's slot, writing into sub-block r of its own slot
//      (allreduce) or straight into `out` (reduce-scatter);
//   3. gather (allreduce): everyone copies sub-block j of member j's slot to
//      chunk k of shard j in `out`.
// Phase 2 of member r reads only sub-blocks r, and writes only its own
// sub-block r, which nobody else reads until phase 3: no member overwrites
// what another still reads. Rounds alternate between the two slots; before
// reusing one, a member waits until everyone has finished round k-2.
#include <algorithm>
#include <cstring>

#include "collectives/collectives.h"
#include "collectives/reduce/reduce.h"
#include "collectives/shm/shm_collectives.h"
#include "collectives/shm/shm_internal.h"
#include "collectives/shm/stream_copy.h"

namespace kolo::collectives::shm {
namespace {

using internal::bytes_at;
using internal::guarded;
using internal::ShardLayout;

void plain_copy(void* dst, const void* src, size_t bytes) { std::memcpy(dst, src, bytes); }

// Members' shards reduced in rounds; `gather` distinguishes allreduce from
// reduce-scatter.
void reduce_in_rounds(ShmGroup& group, const void* in, void* out, size_t count, DataType dtype,
                      ReduceOp op, double postscale, bool gather) {
  const int n = group.size();
  const int r = group.rank();
  const ShardLayout layout(count, n, dtype, group.slot_bytes());
  const size_t e = layout.element;
  const auto copy_out = count * e >= kStreamingBytes ? stream_copy : plain_copy;
  for (size_t k = 0; k < layout.rounds; ++k) {
    const int buffer = static_cast<int>(k % 2);
    group.acquire_slot(buffer);
    std::byte* mine = group.slot(r, buffer);
    for (int j = 0; j < n; ++j) {
      if (j == r) continue;
      std::memcpy(mine + layout.sub_block(j), bytes_at(in, layout.chunk_begin(j, k) * e),
                  layout.chunk_count(j, k) * e);
    }
    group.wait_all(group.advance());

    const size_t length = layout.chunk_count(r, k);
    const size_t begin = layout.chunk_begin(r, k) * e;
    void* dst = gather ? static_cast<void*>(mine + layout.sub_block(r)) : bytes_at(out, begin);
    const void* own = bytes_at(in, begin);
    bool first = true;
    for (int q = 0; q < n; ++q) {
      if (q == r) continue;
      const std::byte* theirs = group.slot(q, buffer) + layout.sub_block(r);
      if (first) {
        reduce::reduce(dst, own, theirs, length, dtype, op);
      } else {
        reduce::reduce_into(dst, theirs, length, dtype, op);
      }
      first = false;
    }
    reduce::scale(dst, length, dtype, postscale);
    const uint32_t reduced = group.advance();
    if (!gather) {
      group.retire_slot(buffer, reduced);
      continue;
    }
    group.wait_all(reduced);
    for (int j = 0; j < n; ++j) {
      copy_out(bytes_at(out, layout.chunk_begin(j, k) * e), group.slot(j, buffer) + layout.sub_block(j),
               layout.chunk_count(j, k) * e);
    }
    group.retire_slot(buffer, group.advance());
  }
}

// Every member publishes its whole input and reduces all of them in member
// order, so all get the same bits with one wait.
void allreduce_small(ShmGroup& group, const void* in, void* out, size_t count, DataType dtype,
                     ReduceOp op, double postscale) {
  const int n = group.size();
  const size_t bytes = count * dtype_size(dtype);
  const int buffer = static_cast<int>(group.advance() % 2);  // alternate slots across operations
  group.acquire_slot(buffer);
  std::memcpy(group.slot(group.rank(), buffer), in, bytes);
  group.wait_all(group.advance());
  reduce::reduce(out, group.slot(0, buffer), group.slot(1, buffer), count, dtype, op);
  for (int q = 2; q < n; ++q) reduce::reduce_into(out, group.slot(q, buffer), count, dtype, op);
  reduce::scale(out, count, dtype, postscale);
  group.retire_slot(buffer, group.advance());
}

}  // namespace

void allreduce(ShmGroup& group, const void* in, void* out, size_t count, DataType dtype,
               ReduceOp op, double postscale, size_t small_bytes) {
  if (count == 0) return;
  guarded(group, [&] {
    const size_t bytes = count * dtype_size(dtype);
    if (bytes <= std::min(small_bytes, group.slot_bytes())) {
      allreduce_small(group, in, out, count, dtype, op, postscale);
    } else {
      reduce_in_rounds(group, in, out, count, dtype, op, postscale, true);
    }
  });
}

void reduce_scatter(ShmGroup& group, const void* in, void* out, size_t count, DataType dtype,
                    ReduceOp op, double postscale) {
  if (count == 0) return;
  guarded(group, [&] { reduce_in_rounds(group, in, out, count, dtype, op, postscale, false); });
}

}  // namespace kolo::collectives::shm
