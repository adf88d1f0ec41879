// horovodrun's YAML config file: every section and key horovodrun's parser
// reads is taken, with the same meaning as the flags; typos are errors
// naming the key.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "common/error.h"
#include "runner/setting_flags.h"

#ifndef KOLO_SOURCE_DIR
#error "KOLO_SOURCE_DIR must point at the repository root"
#endif

namespace kolo::runner {
namespace {

std::string error_of(const std::string& text) {
  try {
    parse_config_text(text, "cfg.yaml");
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigFileTest, ReadsEverySection) {
  ConfigFile f = parse_config_text(
      "params:\n  fusion_threshold_mb: 32\n  cycle_time_ms: 3.5\n  cache_capacity: 2048\n"
      "timeline:\n  filename: tl.json\n  mark_cycles: false\n"
      "stall_check:\n  enabled: true\n  warning_time_seconds: 60\n  shutdown_time_seconds: 120\n"
      "logging:\n  level: DEBUG\n",
      "cfg.yaml");
  EXPECT_EQ(f.settings, (Environment{{"KOLO_FUSION_THRESHOLD", "33554432"},
                                     {"KOLO_CYCLE_TIME", "3.5"},
                                     {"KOLO_CACHE_CAPACITY", "2048"},
                                     {"KOLO_TIMELINE", "tl.json"},
                                     {"KOLO_TIMELINE_MARK_CYCLES", "0"},
                                     {"KOLO_STALL_CHECK_DISABLE", "0"},
                                     {"KOLO_STALL_CHECK_TIME_SECONDS", "60"},
                                     {"KOLO_STALL_SHUTDOWN_TIME_SECONDS", "120"},
                                     {"KOLO_LOG_LEVEL", "debug"}}));
  EXPECT_EQ(f.controller, "");
}

TEST(ConfigFileTest, EmptyFileSetsNothing) {
  EXPECT_TRUE(parse_config_text("", "cfg.yaml").settings.empty());
  EXPECT_TRUE(parse_config_text("# only a comment\n", "cfg.yaml").settings.empty());
}

// Every key of horovodrun's own test file, each with its meaning.
TEST(ConfigFileTest, HorovodsTestFileIsReadWhole) {
  const std::string path =
      std::string(KOLO_SOURCE_DIR) + "/tests/unit/runner/data/horovod_config.test.yaml";
  ConfigFile f = load_config_file(path);
  EXPECT_EQ(f.controller, "gloo");
  EXPECT_EQ(f.settings, (Environment{{"KOLO_FUSION_THRESHOLD", "33554432"},
                                     {"KOLO_CYCLE_TIME", "10"},
                                     {"KOLO_CACHE_CAPACITY", "2048"},
                                     {"KOLO_HIERARCHICAL_ALLREDUCE", "1"},
                                     {"KOLO_HIERARCHICAL_ALLGATHER", "1"},
                                     {"KOLO_TIMELINE", "horovod_timeline.json"},
                                     {"KOLO_TIMELINE_MARK_CYCLES", "1"},
                                     {"KOLO_STALL_CHECK_DISABLE", "0"},
                                     {"KOLO_STALL_CHECK_TIME_SECONDS", "120"},
                                     {"KOLO_STALL_SHUTDOWN_TIME_SECONDS", "240"},
                                     {"KOLO_TIMEOUT_SECONDS", "60"},
                                     {"KOLO_LOG_LEVEL", "info"},
                                     {"KOLO_LOG_HIDE_TIME", "1"},
                                     {"KOLO_AUTOTUNE", "1"},
                                     {"KOLO_AUTOTUNE_LOG", "horovod_autotune_log.txt"},
                                     {"KOLO_AUTOTUNE_WARMUP_SAMPLES", "5"},
                                     {"KOLO_AUTOTUNE_STEPS_PER_SAMPLE", "20"},
                                     {"KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES", "50"},
                                     {"KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE", "0.9"}}));
  const HorovodOnlyRequests& h = f.horovod_only;
  EXPECT_EQ(h.mpi_threads_disable, true);
  EXPECT_EQ(h.num_nccl_streams, 2);
  EXPECT_EQ(h.thread_affinity, 1);
  // Two NCCL streams and a pinned thread are what Kolo cannot do.
  const std::vector<std::string> warnings = check_horovod_only(h);
  ASSERT_EQ(warnings.size(), 2u);
  EXPECT_EQ(warnings[0].rfind("--num-nccl-streams 2: Kolo has no NCCL", 0), 0u) << warnings[0];
  EXPECT_EQ(warnings[1].rfind("--thread-affinity 1: Kolo does not pin", 0), 0u) << warnings[1];
}

TEST(ConfigFileTest, TimestampKeysSayOppositeThings) {
  EXPECT_EQ(parse_config_text("logging:\n  with_timestamp: false\n", "c").settings,
            (Environment{{"KOLO_LOG_HIDE_TIME", "1"}}));
  EXPECT_EQ(parse_config_text("logging:\n  with_timestamp: true\n", "c").settings,
            (Environment{{"KOLO_LOG_HIDE_TIME", "0"}}));
  EXPECT_EQ(parse_config_text("logging:\n  hide_timestamp: false\n", "c").settings,
            (Environment{{"KOLO_LOG_HIDE_TIME", "0"}}));
  EXPECT_EQ(parse_config_text("params:\n  hierarchical_allgather: false\n", "c").settings,
            (Environment{{"KOLO_HIERARCHICAL_ALLGATHER", "0"}}));
}

TEST(ConfigFileTest, ControllerPicksTheLauncher) {
  EXPECT_EQ(parse_config_text("controller: MPI\n", "c").controller, "mpi");
  EXPECT_EQ(parse_config_text("controller: gloo\n", "c").controller, "gloo");
  EXPECT_EQ(error_of("controller: jsrun\n"),
            "config file cfg.yaml: controller: must be gloo or mpi (line 1)");
}

TEST(ConfigFileTest, MistakesNameTheKey) {
  EXPECT_EQ(error_of("params:\n  fusion_treshold_mb: 8\n"),
            "config file cfg.yaml: params.fusion_treshold_mb: unknown key");
  EXPECT_EQ(
      error_of("parms:\n  x: 1\n"),
      "config file cfg.yaml: parms: unknown section (known: controller, library_options, params, "
      "timeline, stall_check, autotune, logging)");
  EXPECT_EQ(error_of("params:\n  fusion_threshold_mb: lots\n"),
            "config file cfg.yaml: params.fusion_threshold_mb 'lots' is not a number");
  EXPECT_EQ(error_of("params:\n  cache_capacity: -2\n"),
            "config file cfg.yaml: params.cache_capacity -2: KOLO_CACHE_CAPACITY='-2' must be "
            "between 0 and 1048576");
  EXPECT_EQ(error_of("stall_check:\n  enabled: perhaps\n"),
            "config file cfg.yaml: stall_check.enabled: must be true or false (line 2)");
  EXPECT_EQ(error_of("library_options:\n  num_nccl_streams: many\n"),
            "config file cfg.yaml: library_options.num_nccl_streams: 'many' is not a value of the "
            "right kind (line 2)");
  EXPECT_EQ(error_of("autotune:\n  warmup_samples: many\n"),
            "config file cfg.yaml: autotune.warmup_samples many: KOLO_AUTOTUNE_WARMUP_SAMPLES="
            "'many' is not an integer");
  EXPECT_EQ(error_of("params: [1, 2]\n"),
            "config file cfg.yaml: params: must be a mapping of keys");
  EXPECT_EQ(
      error_of("- a\n- b\n"),
      "config file cfg.yaml: the file must be a mapping of sections (params:, timeline:, ...)");
  EXPECT_NE(error_of("params: {fusion_threshold_mb: 8\n").find("is not valid YAML"),
            std::string::npos);
}

}  // namespace
}  // namespace kolo::runner
