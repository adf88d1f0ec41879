// Autotuning through the engine, ranks as threads: rank 0 decides, and every
// rank applies each decision after the same negotiation cycle, with results
// right all along (the cache switched off and on, fusion and cycle time
// changing under a running loop).
#include <gtest/gtest.h>

#include <mutex>

#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using testing::floats;
using testing::run_engines;
using testing::wait_for;

void autotune_quickly(Config& config) {
  config.settings.set("KOLO_AUTOTUNE", "1");
  config.settings.set("KOLO_AUTOTUNE_WARMUP_SAMPLES", "0");
  config.settings.set("KOLO_AUTOTUNE_STEPS_PER_SAMPLE", "1");
  config.settings.set("KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES", "3");
}

// Runs `steps` training-like steps (three named allreduces each, results
// checked) and returns what each rank applied.
std::vector<std::vector<AppliedTuning>> run_tuned(int ranks, int steps,
                                                  const testing::EngineRunOptions& run) {
  std::vector<std::vector<AppliedTuning>> applied(static_cast<size_t>(ranks));
  run_engines(
      ranks,
      [&](Engine& engine, int rank) {
        for (int step = 0; step < steps; ++step) {
          std::vector<std::vector<float>> bufs(3, std::vector<float>(256, float(rank + step)));
          std::vector<Handle> handles;
          for (int t = 0; t < 3; ++t)
            handles.push_back(
                engine.allreduce(floats("grad." + std::to_string(t), bufs[t]), {ReduceOp::kSum}));
          const float expected = float(ranks * step + ranks * (ranks - 1) / 2);
          for (int t = 0; t < 3; ++t) {
            ASSERT_TRUE(wait_for(handles[t]).ok()) << handles[t]->status().ToString();
            ASSERT_EQ(bufs[t][255], expected) << "step " << step;
          }
        }
        ASSERT_TRUE(wait_for(engine.barrier()).ok());
        applied[rank] = engine.applied_tunings();
      },
      run);
  return applied;
}

TEST(EngineAutotune, EveryRankAppliesTheSameSettingsAfterTheSameCycle) {
  testing::EngineRunOptions run;
  run.configure = autotune_quickly;
  const auto applied = run_tuned(2, 120, run);
  // The starting point, two more Bayesian points, the cache flipped, and the
  // final choice.
  ASSERT_EQ(applied[0].size(), 5u);
  EXPECT_EQ(applied[1], applied[0]);
  EXPECT_EQ(applied[0][0].cycle, 1u);  // the first negotiation carries the start
  EXPECT_EQ(applied[0][0].params.fusion_threshold_mb, 4);
  EXPECT_EQ(applied[0][0].params.cycle_time_ms, 5);
  for (size_t i = 1; i < applied[0].size(); ++i)
    EXPECT_GT(applied[0][i].cycle, applied[0][i - 1].cycle);
  EXPECT_NE(applied[0][3].params.cache_enabled, applied[0][2].params.cache_enabled);
  EXPECT_TRUE(applied[0][3].params.active);
  EXPECT_FALSE(applied[0].back().params.active);
}

TEST(EngineAutotune, ThreeRanksAgreeToo) {
  testing::EngineRunOptions run;
  run.configure = autotune_quickly;
  const auto applied = run_tuned(3, 120, run);
  ASSERT_FALSE(applied[0].empty());
  EXPECT_EQ(applied[1], applied[0]);
  EXPECT_EQ(applied[2], applied[0]);
  EXPECT_FALSE(applied[0].back().params.active);
}

TEST(EngineAutotune, SettingsTheUserFixedStayAsSet) {
  testing::EngineRunOptions run;
  run.configure = [](Config& config) {
    autotune_quickly(config);
    config.settings.set("KOLO_CYCLE_TIME", "2");
    config.engine.cycle_time = std::chrono::milliseconds(2);
    config.settings.set("KOLO_CACHE_CAPACITY", "64");
    config.engine.cache_capacity = 64;
  };
  const auto applied = run_tuned(2, 80, run);
  ASSERT_EQ(applied[0].size(), 4u);  // start, two points, final: no cache trial
  EXPECT_EQ(applied[1], applied[0]);
  for (const AppliedTuning& a : applied[0]) {
    EXPECT_EQ(a.params.cycle_time_ms, 2);
    EXPECT_TRUE(a.params.cache_enabled);
  }
}

TEST(EngineAutotune, OffByDefault) {
  const auto applied = run_tuned(2, 5, {});
  EXPECT_TRUE(applied[0].empty());
  EXPECT_TRUE(applied[1].empty());
}

}  // namespace
}  // namespace kolo::core
