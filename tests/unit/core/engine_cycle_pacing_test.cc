// When the engine's cycle starts (core/cycle_pacer.h): at once when a
// caller waits for a handle after its burst of enqueues, after the settle
// time (a tenth of KOLO_CYCLE_TIME) when nobody waits. The cycle times here
// are long, so that the two cases differ by far more than a loaded host's
// scheduling delays.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using Clock = std::chrono::steady_clock;
using testing::floats;
using testing::run_engines;
using testing::wait_for;

testing::EngineRunOptions with_cycle_time(std::chrono::milliseconds cycle) {
  testing::EngineRunOptions run;
  run.configure = [cycle](Config& config) {
    config.settings.set("KOLO_CYCLE_TIME", std::to_string(cycle.count()));
    config.engine.cycle_time = cycle;
  };
  return run;
}

TEST(EngineCyclePacing, AWaitingCallerStartsTheCycleWithoutTheSettleTime) {
  // Settle time 1 s: a step that waited for it would take 1 s at least.
  constexpr int kTensors = 20;
  run_engines(
      2,
      [](Engine& engine, int rank) {
        std::vector<std::vector<float>> grads(kTensors, std::vector<float>(64));
        // Past the engines' first cycles, which start with the engines: one
        // that began while this rank was enqueueing would take part of the
        // burst, and the rank would then wait out a catch-up pause (a tenth
        // of the cycle time, doubled) for its peer.
        ASSERT_TRUE(wait_for(engine.barrier()).ok());
        for (int step = 0; step < 3; ++step) {
          for (auto& g : grads) std::fill(g.begin(), g.end(), static_cast<float>(rank + 1));
          const auto start = Clock::now();
          std::vector<Handle> handles;
          for (int t = 0; t < kTensors; ++t)
            handles.push_back(
                engine.allreduce(floats("g" + std::to_string(t), grads[t]), {ReduceOp::kSum}));
          for (auto& h : handles) ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
          const auto took = Clock::now() - start;
          EXPECT_LT(took, std::chrono::milliseconds(500)) << "rank " << rank << " step " << step;
          EXPECT_EQ(grads[kTensors - 1][63], 3.0f);
        }
      },
      with_cycle_time(std::chrono::milliseconds(10000)));
}

TEST(EngineCyclePacing, WithoutAWaiterTheCycleStartsAfterTheSettleTime) {
  // Settle time 300 ms. Nobody blocks on the handle (as with a completion
  // callback), so the cycle starts once the enqueues have been quiet that
  // long: neither at once nor only at the cycle's deadline.
  run_engines(
      2,
      [](Engine& engine, int rank) {
        std::vector<float> buf(8, 1.0f);
        std::this_thread::sleep_for(std::chrono::milliseconds(100));  // past the first cycle
        const auto start = Clock::now();
        Handle h = engine.allreduce(floats("polled", buf), {ReduceOp::kSum});
        while (!h->done() && Clock::now() - start < std::chrono::seconds(20))
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        const auto took = Clock::now() - start;
        ASSERT_TRUE(h->done());
        EXPECT_TRUE(h->status().ok()) << h->status().ToString();
        EXPECT_GE(took, std::chrono::milliseconds(250)) << "rank " << rank;
        EXPECT_LT(took, std::chrono::milliseconds(2500)) << "rank " << rank;
        EXPECT_EQ(buf[0], 2.0f);
      },
      with_cycle_time(std::chrono::milliseconds(3000)));
}

}  // namespace
}  // namespace kolo::core
