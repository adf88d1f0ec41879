#include "common/even_shards.h"

#include <gtest/gtest.h>

#include <cstddef>
#include <vector>

namespace kolo {
namespace {

std::vector<std::size_t> counts_of(std::size_t count, int shards) {
  std::vector<std::size_t> counts;
  for (int i = 0; i < shards; ++i) counts.push_back(even_shard(count, shards, i).count);
  return counts;
}

TEST(EvenShards, TheRemainderGoesToTheFirstShards) {
  EXPECT_EQ(counts_of(7, 3), (std::vector<std::size_t>{3, 2, 2}));
  EXPECT_EQ(counts_of(11, 4), (std::vector<std::size_t>{3, 3, 3, 2}));
  EXPECT_EQ(counts_of(9, 3), (std::vector<std::size_t>{3, 3, 3}));
  EXPECT_EQ(even_shard(7, 3, 1).offset, 3u);
  EXPECT_EQ(even_shard(7, 3, 2).offset, 5u);
}

TEST(EvenShards, FewerItemsThanShardsLeavesTheLastShardsEmptyAtTheEnd) {
  EXPECT_EQ(counts_of(2, 5), (std::vector<std::size_t>{1, 1, 0, 0, 0}));
  EXPECT_EQ(counts_of(0, 3), (std::vector<std::size_t>{0, 0, 0}));
  for (int i = 2; i < 5; ++i) EXPECT_EQ(even_shard(2, 5, i).offset, 2u) << "shard " << i;
}

TEST(EvenShards, ShardsTileTheCountInOrderAndDifferByAtMostOne) {
  for (int shards = 1; shards <= 9; ++shards) {
    for (std::size_t count : {0, 1, 2, 5, 8, 9, 13, 100, 99991}) {
      std::size_t next = 0;
      for (int i = 0; i < shards; ++i) {
        const Shard shard = even_shard(count, shards, i);
        EXPECT_EQ(shard.offset, next) << count << " items, shard " << i << " of " << shards;
        EXPECT_LE(shard.count, even_shard(count, shards, 0).count);
        EXPECT_GE(shard.count + 1, even_shard(count, shards, 0).count);
        next += shard.count;
      }
      EXPECT_EQ(next, count) << count << " items in " << shards << " shards";
    }
  }
}

}  // namespace
}  // namespace kolo
