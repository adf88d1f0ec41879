// How a count is cut into per-rank shards, for every layer that must agree on the cut without
// exchanging it (the reduce-scatter algorithms and the engine that sizes their outputs).
#pragma once

#include <algorithm>
#include <cstddef>

namespace kolo {

struct Shard {
  std::size_t offset = 0;  // items before this shard
  std::size_t count = 0;
};

// Shard `index` of `count` items cut into `shards` contiguous shards in index order, as even as
// can be: every shard holds count / shards items, and the first count % shards hold one more.
// With fewer items than shards, the last shards are empty (offset count).
constexpr Shard even_shard(std::size_t count, int shards, int index) {
  const auto n = static_cast<std::size_t>(shards);
  const auto i = static_cast<std::size_t>(index);
  return {i * (count / n) + std::min(i, count % n), count / n + (i < count % n ? 1 : 0)};
}

}  // namespace kolo
