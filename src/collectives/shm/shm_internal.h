// What the shared-memory collectives share (internal to src/collectives/shm).
#pragma once

#include <algorithm>
#include <cstddef>
#include <exception>
#include <vector>

#include "collectives/collectives.h"
#include "kolo/types.h"
#include "transport/shared_memory_group.h"

namespace kolo::collectives::shm::internal {

// How a message of `total` elements is cut for the reduce rounds: member j
// owns shard j (the reduce_scatter_count/offset layout), and round k moves
// chunk k of every shard, which sits in sub-block j of a slot.
struct ShardLayout {
  size_t element = 0;
  size_t per_round = 0;  // elements of each shard per round
  size_t rounds = 0;
  std::vector<size_t> offset, count;  // each shard, in elements

  // align == 1: reduce-scatter's shards (reduce_scatter_offset), which its
  // caller's output is. Otherwise (an allreduce, whose shards nobody sees)
  // every shard and every round's chunk starts at a multiple of `align`
  // elements, so that the staging slots' sub-blocks and the tensors agree
  // on where cache lines begin (see PartList).
  ShardLayout(size_t total, int n, DataType dtype, size_t slot_bytes, size_t align = 1)
      : element(dtype_size(dtype)) {
    per_round = std::max<size_t>(1, slot_bytes / (static_cast<size_t>(n) * element));
    if (per_round > align) per_round -= per_round % align;
    const size_t members = static_cast<size_t>(n);
    const size_t aligned_share = ((total + members - 1) / members + align - 1) / align * align;
    for (int j = 0; j < n; ++j) {
      if (align == 1) {
        offset.push_back(reduce_scatter_offset(total, n, j));
        count.push_back(reduce_scatter_count(total, n, j));
      } else {
        const size_t begin = std::min(total, static_cast<size_t>(j) * aligned_share);
        offset.push_back(begin);
        count.push_back(std::min(total, begin + aligned_share) - begin);
      }
    }
    rounds = (count[0] + per_round - 1) / per_round;  // shard 0 is the longest
  }
  // Chunk k of shard j: first element (within the whole message) and length.
  size_t chunk_begin(int j, size_t k) const {
    return offset[j] + std::min(count[j], k * per_round);
  }
  size_t chunk_count(int j, size_t k) const {
    size_t start = std::min(count[j], k * per_round);
    return std::min(per_round, count[j] - start);
  }
  size_t sub_block(int j) const { return static_cast<size_t>(j) * per_round * element; }
};

// Runs a collective's body; an exception poisons the group (its phases are
// out of step now) and tells the other members before it propagates.
template <typename Body>
void guarded(transport::SharedMemoryGroup& group, Body&& body) {
  group.check_usable();
  try {
    body();
  } catch (...) {
    group.poison(std::current_exception());
    throw;
  }
}

}  // namespace kolo::collectives::shm::internal
