// The engine's collectives through the whole path (enqueue, negotiation,
// fusion, execution, completion) on several ranks as threads.
#include <gtest/gtest.h>

#include <numeric>

#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using testing::run_engines;
using testing::wait_for;

using testing::floats;

TEST(EngineBasic, SingleProcessWithoutStore) {
  Config config;
  Engine engine(config);
  std::vector<float> in{1, 2, 3}, out(3);
  auto handle = engine.allreduce(floats("x", in, out), {ReduceOp::kSum});
  ASSERT_TRUE(wait_for(handle).ok()) << handle->status().ToString();
  EXPECT_EQ(out, in);
}

TEST(EngineBasic, AllreduceSumAndAverageOnFourRanks) {
  run_engines(4, [](Engine& engine, int rank) {
    std::vector<float> in(1000, static_cast<float>(rank + 1)), sum(1000), avg(1000);
    auto h1 = engine.allreduce(floats("sum", in, sum), {ReduceOp::kSum});
    auto h2 = engine.allreduce(floats("avg", in, avg), {ReduceOp::kAverage});
    ASSERT_TRUE(wait_for(h1).ok()) << h1->status().ToString();
    ASSERT_TRUE(wait_for(h2).ok()) << h2->status().ToString();
    EXPECT_EQ(sum[999], 10.0f);
    EXPECT_EQ(avg[0], 2.5f);
  });
}

TEST(EngineBasic, InitShutdownInitThreeTimes) {
  testing::EngineRunOptions shared;
  shared.store = std::make_shared<rendezvous::MemoryStore>();
  for (int round = 0; round < 3; ++round) {
    run_engines(
        2,
        [round](Engine& engine, int rank) {
          std::vector<float> in(4, static_cast<float>(rank + round)), out(4);
          auto h = engine.allreduce(floats("t", in, out), {ReduceOp::kSum});
          ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
          EXPECT_EQ(out[0], static_cast<float>(1 + 2 * round));
        },
        shared);
  }
}

}  // namespace
}  // namespace kolo::core
