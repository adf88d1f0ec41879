// OutputPool (core/output_pool.h): outputs come back for reuse only once
// released, the free lists stay within their limit, and close() empties
// them while blocks still out stay valid.
#include "core/output_pool.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <set>
#include <vector>

namespace kolo::core {
namespace {

constexpr size_t kKiB = 1024;
constexpr size_t kMiB = 1024 * 1024;

TEST(OutputPoolTest, SizeClassesRoundUpByAtMostAQuarter) {
  EXPECT_EQ(OutputPool::size_class(1), 64u);
  EXPECT_EQ(OutputPool::size_class(64), 64u);
  EXPECT_EQ(OutputPool::size_class(65), 80u);
  EXPECT_EQ(OutputPool::size_class(64 * kMiB), 64 * kMiB);
  EXPECT_EQ(OutputPool::size_class(64 * kMiB + 1), 80 * kMiB);
  for (size_t bytes : {size_t{100}, size_t{4097}, 3 * kMiB + 5, 100 * kMiB}) {
    const size_t cls = OutputPool::size_class(bytes);
    EXPECT_GE(cls, bytes);
    EXPECT_LE(cls, bytes + bytes / 4 + 64) << bytes;
    EXPECT_EQ(OutputPool::size_class(cls), cls) << "a class is its own class";
  }
}

TEST(OutputPoolTest, ZeroBytesIsAnEmptyBlock) {
  auto pool = std::make_shared<OutputPool>(kMiB);
  OutputBlock block = pool->acquire(0);
  EXPECT_TRUE(block.empty());
  EXPECT_EQ(block.data(), nullptr);
  EXPECT_EQ(pool->stats().allocated, 0u);
}

TEST(OutputPoolTest, ReleasedBlockIsReusedForTheSameClass) {
  auto pool = std::make_shared<OutputPool>(16 * kMiB);
  std::byte* first = nullptr;
  {
    OutputBlock block = pool->acquire(kMiB);
    ASSERT_NE(block.data(), nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block.data()) % 64, 0u);
    std::memset(block.data(), 1, block.size());
    first = block.data();
  }
  EXPECT_EQ(pool->stats().cached_bytes, kMiB);
  OutputBlock again = pool->acquire(kMiB - 100);  // same size class
  EXPECT_EQ(again.data(), first);
  EXPECT_EQ(again.size(), kMiB - 100);
  const OutputPoolStats stats = pool->stats();
  EXPECT_EQ(stats.reused, 1u);
  EXPECT_EQ(stats.allocated, 1u);
  EXPECT_EQ(stats.cached_bytes, 0u);
}

TEST(OutputPoolTest, BlocksStillHeldAreNeverHandedOutTwice) {
  auto pool = std::make_shared<OutputPool>(64 * kMiB);
  std::vector<OutputBlock> held;
  std::set<std::byte*> seen;
  for (int round = 0; round < 3; ++round) {
    for (int i = 0; i < 8; ++i) {
      held.push_back(pool->acquire(64 * kKiB));
      EXPECT_TRUE(seen.insert(held.back().data()).second) << "a held block was handed out again";
    }
    // Release every other one: those may come back, the rest may not.
    std::vector<OutputBlock> kept;
    for (size_t i = 0; i < held.size(); ++i) {
      if (i % 2 == 0) {
        seen.erase(held[i].data());
      } else {
        kept.push_back(std::move(held[i]));
      }
    }
    held = std::move(kept);
  }
}

TEST(OutputPoolTest, WritesToOneBlockLeaveTheOthersAlone) {
  auto pool = std::make_shared<OutputPool>(kMiB);
  OutputBlock a = pool->acquire(4096);
  OutputBlock b = pool->acquire(4096);
  std::memset(a.data(), 0xAA, a.size());
  std::memset(b.data(), 0xBB, b.size());
  for (size_t i = 0; i < a.size(); ++i) ASSERT_EQ(a.data()[i], std::byte{0xAA});
}

TEST(OutputPoolTest, FreeListsStayWithinTheLimit) {
  auto pool = std::make_shared<OutputPool>(kMiB);
  {
    std::vector<OutputBlock> blocks;
    for (int i = 0; i < 10; ++i) blocks.push_back(pool->acquire(256 * kKiB));
  }
  OutputPoolStats stats = pool->stats();
  EXPECT_EQ(stats.cached_bytes, kMiB);
  EXPECT_EQ(stats.cached_blocks, 4u);
  // A block larger than the whole limit is freed, not cached.
  { OutputBlock big = pool->acquire(2 * kMiB); }
  EXPECT_EQ(pool->stats().cached_bytes, kMiB);
  // A returning block makes room by evicting the largest classes first.
  { OutputBlock small = pool->acquire(100 * kKiB); }
  stats = pool->stats();
  EXPECT_LE(stats.cached_bytes, kMiB);
  EXPECT_EQ(stats.cached_blocks, 4u);  // three of 256 KiB and the new one
  OutputBlock reused = pool->acquire(100 * kKiB);
  EXPECT_EQ(pool->stats().reused, 1u);
}

TEST(OutputPoolTest, ZeroLimitCachesNothing) {
  auto pool = std::make_shared<OutputPool>(0);
  { OutputBlock block = pool->acquire(4096); }
  EXPECT_EQ(pool->stats().cached_bytes, 0u);
  OutputBlock again = pool->acquire(4096);
  EXPECT_EQ(pool->stats().reused, 0u);
  EXPECT_EQ(pool->stats().allocated, 2u);
}

TEST(OutputPoolTest, CloseEmptiesTheCacheAndBlocksOutliveThePool) {
  auto pool = std::make_shared<OutputPool>(16 * kMiB);
  { OutputBlock cached = pool->acquire(kMiB); }
  OutputBlock held = pool->acquire(2 * kMiB);
  std::memset(held.data(), 7, held.size());
  pool->close();
  EXPECT_EQ(pool->stats().cached_bytes, 0u);
  std::weak_ptr<OutputPool> watch = pool;
  pool.reset();  // the engine is gone; the block still holds the pool
  EXPECT_FALSE(watch.expired());
  EXPECT_EQ(held.data()[held.size() - 1], std::byte{7});
  held = OutputBlock();  // returns to a closed pool: freed at once
  EXPECT_TRUE(watch.expired());
}

TEST(OutputPoolTest, MovedFromBlockGivesNothingBack) {
  auto pool = std::make_shared<OutputPool>(16 * kMiB);
  OutputBlock a = pool->acquire(kMiB);
  std::byte* data = a.data();
  OutputBlock b = std::move(a);
  // The moved-from state is the point here.
  EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  EXPECT_EQ(b.data(), data);
  a = OutputBlock();
  EXPECT_EQ(pool->stats().cached_bytes, 0u);
  b = OutputBlock();
  EXPECT_EQ(pool->stats().cached_bytes, kMiB);
}

}  // namespace
}  // namespace kolo::core
