// The autotuner's search (ParameterManager) driven with known scores: the
// phases, what it keeps, what it leaves alone, its CSV, and its sampling of
// real cycles.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "common/error.h"
#include "core/autotune/parameter_manager.h"
#include "core/autotune/tuned_params.h"

namespace kolo::core::autotune {
namespace {

using Clock = ParameterManager::Clock;

// A workload whose best region is known: many small tensors, so fusion
// below ~1 MiB is much worse, and every millisecond of cycle time costs;
// the cache helps a little.
double known_score(const TunedParams& p) {
  const double fusion = std::min(p.fusion_threshold_mb, 1.0);
  return 100 * fusion / (1 + 0.05 * p.cycle_time_ms) + (p.cache_enabled ? 3 : 0);
}

// Runs the search to the end; returns every settings value it asked for.
std::vector<TunedParams> drive(ParameterManager& m, double (*score)(const TunedParams&)) {
  std::vector<TunedParams> asked{m.current()};
  for (int i = 0; i < 200 && m.active(); ++i)
    if (auto next = m.score_sample(score(m.current()))) asked.push_back(*next);
  return asked;
}

std::vector<std::string> lines_of(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TunedParams, RoundTripAndRefuseGarbage) {
  TunedParams p{12.5, 3.25, false, true, false, true};
  EXPECT_EQ(decode_tuned_params(encode_tuned_params(p)), p);
  p.active = false;
  EXPECT_EQ(decode_tuned_params(encode_tuned_params(p)), p);
  EXPECT_THROW(decode_tuned_params("nonsense"), InvalidArgument);
  std::string truncated = encode_tuned_params(p);
  truncated.pop_back();
  EXPECT_THROW(decode_tuned_params(truncated), InvalidArgument);
}

TEST(ParameterManager, ConvergesToTheKnownBestRegionAndKeepsIt) {
  AutotuneOptions o;
  o.warmup_samples = 2;
  o.max_samples = 12;
  o.noise = 0.1;
  ParameterManager m(o, Clock::now());
  const std::vector<TunedParams> asked = drive(m, known_score);
  EXPECT_FALSE(m.active());
  // Warmup asks nothing; then 12 Bayesian samples, one cache trial, done.
  EXPECT_EQ(asked.size(), 1u + 12u + 1u);
  EXPECT_EQ(asked.front().fusion_threshold_mb, 4);  // Horovod's first point
  EXPECT_EQ(asked.front().cycle_time_ms, 5);
  const TunedParams& final = asked.back();
  EXPECT_FALSE(final.active);
  EXPECT_EQ(final, m.current());
  EXPECT_GE(final.fusion_threshold_mb, 1.0);
  EXPECT_LE(final.cycle_time_ms, 6.0);
  EXPECT_TRUE(final.cache_enabled);
  EXPECT_GE(known_score(final), 0.95 * known_score({64, 1, true, false, false, false}));
  // After the end, scores change nothing.
  EXPECT_FALSE(m.score_sample(1e9).has_value());
  EXPECT_EQ(m.current(), final);
}

TEST(ParameterManager, UserFixedSettingsAreNeverTuned) {
  AutotuneOptions o;
  o.warmup_samples = 0;
  o.max_samples = 8;
  o.initial.fusion_threshold_mb = 2;
  o.initial.cache_enabled = false;
  o.tune_fusion_threshold = false;  // the user set the threshold and the cache
  o.tune_cache = false;
  ParameterManager m(o, Clock::now());
  for (const TunedParams& p : drive(m, known_score)) {
    EXPECT_EQ(p.fusion_threshold_mb, 2);
    EXPECT_FALSE(p.cache_enabled);
    EXPECT_GE(p.cycle_time_ms, 1);
    EXPECT_LE(p.cycle_time_ms, 100);
  }
  EXPECT_LE(m.current().cycle_time_ms, 10);
}

TEST(ParameterManager, SwitchesAreKeptOnlyWhenTheyScoreBetter) {
  AutotuneOptions o;
  o.warmup_samples = 0;
  o.max_samples = 4;
  o.tune_hierarchical_allreduce = true;
  o.tune_hierarchical_allgather = true;
  ParameterManager m(o, Clock::now());
  // Hierarchical allreduce helps a lot, allgather hurts, the cache is neutral.
  auto score = [](const TunedParams& p) {
    return 10.0 + (p.hierarchical_allreduce ? 5 : 0) - (p.hierarchical_allgather ? 5 : 0);
  };
  std::vector<TunedParams> asked{m.current()};
  while (m.active()) asked.push_back(*m.score_sample(score(m.current())));
  EXPECT_EQ(asked.size(), 1u + 4u + 3u);  // 4 Bayesian, 3 switches
  EXPECT_TRUE(m.current().hierarchical_allreduce);
  EXPECT_FALSE(m.current().hierarchical_allgather);
  EXPECT_TRUE(m.current().cache_enabled);  // flipping it scored no better
}

TEST(ParameterManager, NothingToTuneEndsAtOnce) {
  AutotuneOptions o;
  o.tune_fusion_threshold = o.tune_cycle_time = o.tune_cache = false;
  o.initial.cycle_time_ms = 3;
  ParameterManager m(o, Clock::now());
  EXPECT_FALSE(m.active());
  EXPECT_EQ(m.current().cycle_time_ms, 3);
}

TEST(ParameterManager, WritesHorovodsCsv) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("kolo_autotune_" + std::to_string(getpid()) + ".csv"))
                               .string();
  AutotuneOptions o;
  o.warmup_samples = 1;
  o.max_samples = 5;
  o.log_path = path;
  {
    ParameterManager m(o, Clock::now());
    drive(m, known_score);
  }
  const std::vector<std::string> lines = lines_of(path);
  std::filesystem::remove(path);
  ASSERT_EQ(lines.size(), 1u + 5u + 1u + 1u);  // header, 5 Bayesian, the cache, the best
  EXPECT_EQ(lines[0],
            "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,"
            "cycle_time_ms,tensor_fusion_threshold,score");
  EXPECT_EQ(
      lines[1], "0,0,0,1,5,4," + [] {
        std::ostringstream s;
        s << known_score({4, 5, true, false, false, true});
        return s.str();
      }());
  // The last row repeats the best sample's values and score.
  double best = 0;
  std::string best_row;
  for (size_t i = 1; i + 1 < lines.size(); ++i) {
    const double score = std::stod(lines[i].substr(lines[i].rfind(',') + 1));
    if (score > best) {
      best = score;
      best_row = lines[i];
    }
  }
  EXPECT_EQ(lines.back(), best_row);
}

TEST(ParameterManager, ScoresRealCyclesAsBytesPerMicrosecond) {
  AutotuneOptions o;
  o.warmup_samples = 0;
  o.steps_per_sample = 2;
  o.max_samples = 3;
  const Clock::time_point t0 = Clock::now();
  ParameterManager m(o, t0);
  // Until the starting settings are applied, nothing is measured.
  EXPECT_FALSE(m.record({"a"}, 1000, t0).has_value());
  m.applied(t0);
  // Each step runs tensors a and b (2000 bytes) in 1 ms: 2 bytes/us. A
  // measurement ends when a tensor has run 2 more times; five make a sample.
  std::optional<TunedParams> next;
  Clock::time_point t = t0;
  int steps = 0;
  while (!next && steps < 100) {
    t += std::chrono::milliseconds(1);
    next = m.record({"a", "b"}, 2000, t);
    ++steps;
  }
  ASSERT_TRUE(next.has_value());
  EXPECT_EQ(steps, 10);
  EXPECT_NEAR(m.best_score(), 2.0, 1e-9);
  EXPECT_EQ(next->fusion_threshold_mb, 32);  // Horovod's second point
  // Waiting for the switch: cycles before it are not counted.
  EXPECT_FALSE(m.record({"a", "b"}, 2000, t + std::chrono::seconds(1)).has_value());
}

}  // namespace
}  // namespace kolo::core::autotune
