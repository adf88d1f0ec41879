// Negotiation: ranks submitting in different orders, the response cache's
// fast path, unnamed operations, grouped operations and name reuse.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "common/error.h"
#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using testing::run_engines;
using testing::wait_for;

using testing::floats;

// The acceptance test of the engine issue: 4 ranks, 50 tensors per step,
// each rank in its own random order every step, 1,000 steps.
TEST(EngineNegotiation, RandomSubmissionOrderFourRanksThousandSteps) {
  constexpr int kRanks = 4, kTensors = 50, kSteps = 1000, kLength = 7;
  run_engines(kRanks, [](Engine& engine, int rank) {
    std::mt19937 rng(1234 + rank);
    std::vector<std::vector<float>> in(kTensors, std::vector<float>(kLength));
    std::vector<std::vector<float>> out(kTensors, std::vector<float>(kLength));
    std::vector<int> order(kTensors);
    std::iota(order.begin(), order.end(), 0);
    for (int step = 0; step < kSteps; ++step) {
      std::shuffle(order.begin(), order.end(), rng);
      std::vector<Handle> handles(kTensors);
      for (int t : order) {
        std::fill(in[t].begin(), in[t].end(), static_cast<float>(rank * 1000 + t + step));
        handles[t] =
            engine.allreduce(floats("grad." + std::to_string(t), in[t], out[t]), {ReduceOp::kSum});
      }
      for (int t = 0; t < kTensors; ++t) {
        Status status = wait_for(handles[t]);
        ASSERT_TRUE(status.ok()) << "step " << step << " tensor " << t << ": " << status.ToString();
        // sum over ranks of (rank*1000 + t + step)
        float expected = 1000.0f * (0 + 1 + 2 + 3) + static_cast<float>(kRanks * (t + step));
        ASSERT_EQ(out[t][kLength - 1], expected) << "step " << step << " tensor " << t;
      }
    }
  });
}

TEST(EngineNegotiation, SteadyLoopHitsTheCacheAfterTheFirstStep) {
  constexpr int kTensors = 20;
  run_engines(3, [](Engine& engine, int rank) {
    std::vector<std::vector<float>> in(kTensors, std::vector<float>(16, 1.0f));
    std::vector<std::vector<float>> out(kTensors, std::vector<float>(16));
    auto step = [&] {
      std::vector<Handle> handles;
      for (int t = 0; t < kTensors; ++t) {
        handles.push_back(
            engine.allreduce(floats("w" + std::to_string(t), in[t], out[t]), {ReduceOp::kSum}));
      }
      for (auto& h : handles) ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
    };
    step();
    CacheStats first = engine.cache_stats();
    EXPECT_EQ(first.misses, static_cast<uint64_t>(kTensors));
    for (int i = 0; i < 10; ++i) step();
    CacheStats after = engine.cache_stats();
    EXPECT_EQ(after.misses, first.misses) << "rank " << rank;
    EXPECT_EQ(after.hits - first.hits, static_cast<uint64_t>(10 * kTensors)) << "rank " << rank;
    EXPECT_EQ(out[0][0], 3.0f);
  });
}

TEST(EngineNegotiation, ChangedShapeInvalidatesTheCachedResponse) {
  run_engines(2, [](Engine& engine, int rank) {
    for (int length : {8, 8, 12, 12, 8}) {
      std::vector<float> in(length, 1.0f), out(length);
      auto h = engine.allreduce(floats("t", in, out), {ReduceOp::kSum});
      ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
      EXPECT_EQ(out[length - 1], 2.0f);
    }
  });
}

TEST(EngineNegotiation, UnnamedOperationsMatchByCallOrder) {
  run_engines(3, [](Engine& engine, int rank) {
    std::vector<float> a(5, static_cast<float>(rank)), b(9, 1.0f), out_a(5), out_b(9);
    auto ha = engine.allreduce(floats("", a, out_a), {ReduceOp::kSum});
    auto hb = engine.allreduce(floats("", b, out_b), {ReduceOp::kSum});
    ASSERT_TRUE(wait_for(ha).ok()) << ha->status().ToString();
    ASSERT_TRUE(wait_for(hb).ok()) << hb->status().ToString();
    EXPECT_EQ(out_a[4], 3.0f);
    EXPECT_EQ(out_b[8], 3.0f);
  });
}

TEST(EngineNegotiation, NameReusedWhileInFlightIsRefused) {
  run_engines(2, [](Engine& engine, int rank) {
    std::vector<float> in(4, 1.0f), out(4), out2(4);
    if (rank == 0) {
      auto h = engine.allreduce(floats("dup", in, out), {ReduceOp::kSum});
      try {
        engine.allreduce(floats("dup", in, out2), {ReduceOp::kSum});
        ADD_FAILURE() << "second enqueue of 'dup' was accepted";
      } catch (const InvalidArgument& e) {
        EXPECT_NE(std::string(e.what()).find("'dup'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("already in use"), std::string::npos) << e.what();
      }
      ASSERT_TRUE(wait_for(h).ok());
    } else {
      auto h = engine.allreduce(floats("dup", in, out), {ReduceOp::kSum});
      ASSERT_TRUE(wait_for(h).ok());
    }
    EXPECT_EQ(out[0], 2.0f);
  });
}

TEST(EngineNegotiation, ARefusedGroupLeavesNoneOfItsNamesInFlight) {
  // The group repeats 'b' after 'a': it is refused whole, and 'a' (checked
  // and marked in flight before 'b' was refused) is free again.
  run_engines(2, [](Engine& engine, int rank) {
    std::vector<float> a(4, 1.0f), b(4, 1.0f), c(4, 1.0f);
    try {
      engine.grouped_allreduce({floats("a", a, a), floats("b", b, b), floats("b", c, c)},
                               {ReduceOp::kSum});
      ADD_FAILURE() << "a group naming 'b' twice was accepted on rank " << rank;
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("'b'"), std::string::npos) << e.what();
    }
    auto ha = engine.allreduce(floats("a", a, a), {ReduceOp::kSum});
    auto hb = engine.allreduce(floats("b", b, b), {ReduceOp::kSum});
    ASSERT_TRUE(wait_for(ha).ok()) << ha->status().ToString();
    ASSERT_TRUE(wait_for(hb).ok()) << hb->status().ToString();
    EXPECT_EQ(a[0], 2.0f);
    EXPECT_EQ(b[3], 2.0f);
  });
}

TEST(EngineNegotiation, GroupedAllreduceRunsAsOneUnit) {
  run_engines(2, [](Engine& engine, int rank) {
    std::vector<std::vector<float>> in(5, std::vector<float>(3, static_cast<float>(rank + 1)));
    std::vector<std::vector<float>> out(5, std::vector<float>(3));
    for (int step = 0; step < 3; ++step) {
      std::vector<TensorArgs> tensors;
      for (int t = 0; t < 5; ++t) tensors.push_back(floats("g" + std::to_string(t), in[t], out[t]));
      auto handles = engine.grouped_allreduce(tensors, {ReduceOp::kAverage});
      ASSERT_EQ(handles.size(), 5u);
      for (auto& h : handles) ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
      for (auto& o : out) EXPECT_EQ(o[2], 1.5f);
    }
  });
}

}  // namespace
}  // namespace kolo::core
