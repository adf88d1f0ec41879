// The response cache: hits, invalidation on changed parameters, and the
// deterministic slot choice and LRU eviction that keep every rank's cache
// identical.
#include "core/response_cache.h"

#include <gtest/gtest.h>

namespace kolo::core {
namespace {

Request req(const std::string& name, int64_t length = 4) {
  Request r;
  r.name = name;
  r.shape = {length};
  return r;
}

Response resp(const std::string& name) {
  Response r;
  r.names = {name};
  return r;
}

TEST(ResponseCache, HitMissAndInvalid) {
  ResponseCache cache(4);
  EXPECT_EQ(cache.lookup(req("a")).state, ResponseCache::State::kMiss);
  cache.put(req("a"), resp("a"));
  auto hit = cache.lookup(req("a"));
  EXPECT_EQ(hit.state, ResponseCache::State::kHit);
  EXPECT_EQ(cache.response(hit.slot).names[0], "a");
  Request other_rank = req("a");
  other_rank.rank = 3;
  other_rank.age_us = 99;
  EXPECT_EQ(cache.lookup(other_rank).state, ResponseCache::State::kHit)
      << "rank and age are not parameters";
  EXPECT_EQ(cache.lookup(req("a", 5)).state, ResponseCache::State::kInvalid);
  EXPECT_EQ(cache.hits(), 2u);
  EXPECT_EQ(cache.misses(), 2u);
  EXPECT_EQ(cache.peek(req("zzz")).state, ResponseCache::State::kMiss);
  EXPECT_EQ(cache.misses(), 2u) << "peek does not count";
}

TEST(ResponseCache, LowestFreeSlotAndLeastRecentlyUsedEviction) {
  ResponseCache cache(3);
  for (const char* n : {"a", "b", "c"}) cache.put(req(n), resp(n));
  EXPECT_EQ(cache.lookup(req("a")).slot, 0u);
  EXPECT_EQ(cache.lookup(req("c")).slot, 2u);
  cache.touch(0);  // a is now the most recent; b the least
  cache.put(req("d"), resp("d"));
  EXPECT_EQ(cache.lookup(req("b")).state, ResponseCache::State::kMiss);
  EXPECT_EQ(cache.lookup(req("d")).slot, 1u);
  cache.erase(2);
  cache.put(req("e"), resp("e"));
  EXPECT_EQ(cache.lookup(req("e")).slot, 2u);
  EXPECT_EQ(cache.size(), 3u);
}

TEST(ResponseCache, ZeroCapacityAndUncacheableOperations) {
  ResponseCache none(0);
  none.put(req("a"), resp("a"));
  EXPECT_EQ(none.lookup(req("a")).state, ResponseCache::State::kMiss);
  Request unnamed = req("allreduce.noname.3");
  EXPECT_FALSE(ResponseCache::cacheable(unnamed));
  Request join = req("kolo.join");
  join.op = OpType::kJoin;
  EXPECT_FALSE(ResponseCache::cacheable(join));
  EXPECT_TRUE(ResponseCache::cacheable(req("grad")));
}

}  // namespace
}  // namespace kolo::core
