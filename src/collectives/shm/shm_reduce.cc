// Shared-memory allreduce, reduce-scatter and fused allreduce (see
// shm_collectives.h), all on one round engine over a PartList (a plain
// message is one part).
//
// A round covers, for every member j, chunk k of shard j. Its phases, each
// ended by advance():
//   1. copy: member r puts chunk k of every shard j != r into sub-block j of
//      its slot (and its own chunk too when it needs prescaling or has a
//      part without input; else it is read where it lies, piece by piece
//      when it spans parts);
//   2. reduce: r combines its own chunk with sub-block r of every other
//      member's slot, into sub-block r of its own slot (allreduce) or
//      straight into the output when that is contiguous (reduce-scatter);
//      an allreduce copies each reduced tile (the group's tile_bytes()) to
//      r's own outputs at once, while it is in the cache;
//   3. gather (allreduce): everyone copies sub-block j of every other
//      member j's slot to chunk k of shard j of the outputs.
// Copies to the outputs use streaming stores from the group's
// streaming_bytes() on.
// Phase 2 of member r reads only sub-blocks r, and writes only its own
// sub-block r, which nobody else reads until phase 3: no member overwrites
// what another still reads. Rounds alternate between the two slots (across
// collectives too); before reusing one, a member waits until everyone has
// finished reading it two windows ago.
#include <algorithm>
#include <cstring>

#include "collectives/collectives.h"
#include "collectives/reduce/reduce.h"
#include "collectives/shm/part_list.h"
#include "collectives/shm/shm_collectives.h"
#include "collectives/shm/shm_internal.h"
#include "collectives/shm/stream_copy.h"

namespace kolo::collectives::shm {
namespace {

using internal::guarded;
using internal::PartList;
using internal::ShardLayout;

void plain_copy(void* dst, const void* src, size_t bytes) {
  std::memcpy(dst, src, bytes);
}

// Where an allreduce's shards, chunks and fused parts start (see PartList):
// a cache line, which is also an AVX-512 vector.
constexpr size_t kAlignBytes = 64;

size_t aligned_elements(DataType dtype) {
  return std::max<size_t>(1, kAlignBytes / dtype_size(dtype));
}

void reduce_in_rounds(SharedMemoryGroup& group, const PartList& list, DataType dtype, ReduceOp op,
                      double prescale, double postscale, bool gather) {
  const int n = group.size();
  const int r = group.rank();
  const ShardLayout layout(list.total(), n, dtype, group.slot_bytes(),
                           gather ? aligned_elements(dtype) : 1);
  const auto copy_out =
      list.total() * layout.element >= group.streaming_bytes() ? stream_copy : plain_copy;
  for (size_t k = 0; k < layout.rounds; ++k) {
    const int buffer = group.next_buffer();
    group.acquire_slot(buffer);
    std::byte* mine = group.slot(r, buffer);
    const size_t length = layout.chunk_count(r, k);
    const size_t begin = layout.chunk_begin(r, k);
    // This member's own chunk is read where it lies, in one part or in the
    // pieces of several (a fused step of small tensors), unless it must be
    // prescaled first or a piece has no input (it reads as zeros).
    const bool own_in_place = prescale == 1.0 && list.inputs_present(begin, length);
    for (int j = 0; j < n; ++j) {
      if (j == r && own_in_place) continue;
      std::byte* sub = mine + layout.sub_block(j);
      list.read(layout.chunk_begin(j, k), layout.chunk_count(j, k), sub);
      reduce::scale(sub, layout.chunk_count(j, k), dtype, prescale);
    }
    group.wait_all(group.advance());

    // Reduce, tile by tile: into sub-block r of the slot for the peers'
    // gather and, while the tile is still in the cache, to this member's
    // own outputs (so its gather copies only the peers' chunks).
    std::byte* direct = gather ? nullptr : list.contiguous_output(begin, length);
    std::byte* dst = direct != nullptr ? direct : mine + layout.sub_block(r);
    const std::byte* copied_own = mine + layout.sub_block(r);
    const size_t tile = std::max<size_t>(1, group.tile_bytes() / layout.element);
    for (size_t at = 0; at < length; at += tile) {
      const size_t count = std::min(tile, length - at);
      const size_t offset = at * layout.element;
      bool combined = false;
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        const std::byte* theirs = group.slot(q, buffer) + layout.sub_block(r) + offset;
        if (combined) {
          reduce::reduce_into(dst + offset, theirs, count, dtype, op);
        } else if (own_in_place) {
          list.visit_inputs(
              begin + at, count, [&](const std::byte* in, size_t pieces, size_t done) {
                const size_t skip = done * layout.element;
                reduce::reduce(dst + offset + skip, in, theirs + skip, pieces, dtype, op);
              });
          combined = true;
        } else {
          reduce::reduce(dst + offset, copied_own + offset, theirs, count, dtype, op);
          combined = true;
        }
      }
      reduce::scale(dst + offset, count, dtype, postscale);
      if (direct == nullptr)
        list.write(begin + at, count, dst + offset, gather ? copy_out : plain_copy);
    }
    if (!gather) {
      group.retire_slot(buffer);
      continue;
    }
    group.wait_all(group.advance());
    for (int j = 0; j < n; ++j) {
      if (j == r) continue;
      list.write(layout.chunk_begin(j, k), layout.chunk_count(j, k),
                 group.slot(j, buffer) + layout.sub_block(j), copy_out);
    }
    group.retire_slot(buffer);
  }
}

// Every member publishes its whole input and reduces all of them in member
// order, so all get the same bits with one phase.
void allreduce_small(SharedMemoryGroup& group, const void* in, void* out, size_t count,
                     DataType dtype, ReduceOp op, double postscale) {
  const int n = group.size();
  const size_t bytes = count * dtype_size(dtype);
  const int buffer = group.next_buffer();
  group.acquire_slot(buffer);
  std::memcpy(group.slot(group.rank(), buffer), in, bytes);
  group.wait_all(group.advance());
  reduce::reduce(out, group.slot(0, buffer), group.slot(1, buffer), count, dtype, op);
  for (int q = 2; q < n; ++q) reduce::reduce_into(out, group.slot(q, buffer), count, dtype, op);
  reduce::scale(out, count, dtype, postscale);
  group.retire_slot(buffer);
}

}  // namespace

void allreduce(SharedMemoryGroup& group, const void* in, void* out, size_t count, DataType dtype,
               ReduceOp op, double postscale, size_t small_bytes) {
  if (count == 0) return;
  guarded(group, [&] {
    const size_t bytes = count * dtype_size(dtype);
    if (bytes <= std::min(small_bytes, group.slot_bytes())) {
      allreduce_small(group, in, out, count, dtype, op, postscale);
    } else {
      const std::vector<FusedPart> whole{{in, out, count}};
      reduce_in_rounds(group, PartList(whole, dtype_size(dtype)), dtype, op, 1.0, postscale, true);
    }
  });
}

void reduce_scatter(SharedMemoryGroup& group, const void* in, void* shard, size_t count,
                    DataType dtype, ReduceOp op, double prescale, double postscale) {
  if (count == 0) return;
  // The input as up to three parts, of which only this member's shard has
  // an output: the rounds write nothing else.
  const size_t element = dtype_size(dtype);
  const size_t offset = reduce_scatter_offset(count, group.size(), group.rank());
  const size_t length = reduce_scatter_count(count, group.size(), group.rank());
  const auto* input = static_cast<const std::byte*>(in);
  std::vector<FusedPart> parts;
  if (offset > 0) parts.push_back({input, nullptr, offset});
  if (length > 0) parts.push_back({input + offset * element, shard, length});
  if (offset + length < count)
    parts.push_back({input + (offset + length) * element, nullptr, count - offset - length});
  guarded(group, [&] {
    reduce_in_rounds(group, PartList(parts, element), dtype, op, prescale, postscale, false);
  });
}

void allreduce_parts(SharedMemoryGroup& group, const std::vector<FusedPart>& parts, DataType dtype,
                     ReduceOp op, double prescale, double postscale) {
  const PartList list(parts, dtype_size(dtype), aligned_elements(dtype));
  if (list.total() == 0) return;
  guarded(group, [&] { reduce_in_rounds(group, list, dtype, op, prescale, postscale, true); });
}

}  // namespace kolo::collectives::shm
