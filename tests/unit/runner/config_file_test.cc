// horovodrun's YAML config file: its sections are read, what Kolo does not
// use is skipped with a warning, and typos are errors naming the key.
#include <gtest/gtest.h>

#include "common/error.h"
#include "runner/setting_flags.h"

namespace kolo::runner {
namespace {

std::string error_of(const std::string& text) {
  try {
    std::vector<std::string> warnings;
    parse_config_text(text, "cfg.yaml", &warnings);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(ConfigFileTest, ReadsEverySection) {
  std::vector<std::string> warnings;
  Environment s = parse_config_text(
      "params:\n  fusion_threshold_mb: 32\n  cycle_time_ms: 3.5\n  cache_capacity: 2048\n"
      "timeline:\n  filename: tl.json\n  mark_cycles: false\n"
      "stall_check:\n  enabled: true\n  warning_time_seconds: 60\n  shutdown_time_seconds: 120\n"
      "logging:\n  level: DEBUG\n",
      "cfg.yaml", &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(s, (Environment{{"KOLO_FUSION_THRESHOLD", "33554432"},
                            {"KOLO_CYCLE_TIME", "3.5"},
                            {"KOLO_CACHE_CAPACITY", "2048"},
                            {"KOLO_TIMELINE", "tl.json"},
                            {"KOLO_TIMELINE_MARK_CYCLES", "0"},
                            {"KOLO_STALL_CHECK_DISABLE", "0"},
                            {"KOLO_STALL_CHECK_TIME_SECONDS", "60"},
                            {"KOLO_STALL_SHUTDOWN_TIME_SECONDS", "120"},
                            {"KOLO_LOG_LEVEL", "debug"}}));
}

TEST(ConfigFileTest, EmptyFileSetsNothing) {
  std::vector<std::string> warnings;
  EXPECT_TRUE(parse_config_text("", "cfg.yaml", &warnings).empty());
  EXPECT_TRUE(parse_config_text("# only a comment\n", "cfg.yaml", &warnings).empty());
}

TEST(ConfigFileTest, HorovodOnlySectionsAreSkippedWithAWarning) {
  std::vector<std::string> warnings;
  Environment s = parse_config_text(
      "controller: gloo\nautotune:\n  enabled: true\nparams:\n  hierarchical_allreduce: true\n"
      "  fusion_threshold_mb: 8\n",
      "cfg.yaml", &warnings);
  EXPECT_EQ(s, (Environment{{"KOLO_FUSION_THRESHOLD", "8388608"}}));
  ASSERT_EQ(warnings.size(), 3u);
  EXPECT_NE(warnings[2].find("params.hierarchical_allreduce has no effect"), std::string::npos);
}

TEST(ConfigFileTest, MistakesNameTheKey) {
  EXPECT_EQ(error_of("params:\n  fusion_treshold_mb: 8\n"),
            "config file cfg.yaml: params.fusion_treshold_mb: unknown key");
  EXPECT_EQ(error_of("parms:\n  x: 1\n"),
            "config file cfg.yaml: parms: unknown section (known: params, timeline, stall_check, "
            "logging)");
  EXPECT_EQ(error_of("params:\n  fusion_threshold_mb: lots\n"),
            "config file cfg.yaml: params.fusion_threshold_mb 'lots' is not a number");
  EXPECT_EQ(error_of("params:\n  cache_capacity: -2\n"),
            "config file cfg.yaml: params.cache_capacity -2: KOLO_CACHE_CAPACITY='-2' must be "
            "between 0 and 1048576");
  EXPECT_EQ(error_of("stall_check:\n  enabled: perhaps\n"),
            "config file cfg.yaml: stall_check.enabled: must be true or false (line 2)");
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
