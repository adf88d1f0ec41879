// horovodrun's YAML config file: its sections are read, what Kolo does not
// use is skipped with a warning, and typos are errors naming the key.
#include <gtest/gtest.h>

#include "common/error.h"
#include "runner/engine_settings.h"

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
  EngineSettings s = parse_config_text(
      "params:\n  fusion_threshold_mb: 32\n  cycle_time_ms: 3.5\n  cache_capacity: 2048\n"
      "timeline:\n  filename: tl.json\n  mark_cycles: false\n"
      "stall_check:\n  enabled: true\n  warning_time_seconds: 60\n  shutdown_time_seconds: 120\n"
      "logging:\n  level: debug\n",
      "cfg.yaml", &warnings);
  EXPECT_TRUE(warnings.empty());
  EXPECT_EQ(s.fusion_threshold_mb, 32);
  EXPECT_EQ(s.cycle_time_ms, 3.5);
  EXPECT_EQ(s.cache_capacity, 2048);
  EXPECT_EQ(s.timeline_filename, "tl.json");
  EXPECT_EQ(s.timeline_mark_cycles, false);
  EXPECT_EQ(s.stall_check, true);
  EXPECT_EQ(s.stall_warning_seconds, 60);
  EXPECT_EQ(s.stall_shutdown_seconds, 120);
  EXPECT_EQ(s.log_level, "debug");
}

TEST(ConfigFileTest, EmptyFileSetsNothing) {
  std::vector<std::string> warnings;
  EXPECT_TRUE(parse_config_text("", "cfg.yaml", &warnings).to_environment().empty());
  EXPECT_TRUE(
      parse_config_text("# only a comment\n", "cfg.yaml", &warnings).to_environment().empty());
}

TEST(ConfigFileTest, HorovodOnlySectionsAreSkippedWithAWarning) {
  std::vector<std::string> warnings;
  EngineSettings s = parse_config_text(
      "controller: gloo\nautotune:\n  enabled: true\nparams:\n  hierarchical_allreduce: true\n"
      "  fusion_threshold_mb: 8\n",
      "cfg.yaml", &warnings);
  EXPECT_EQ(s.fusion_threshold_mb, 8);
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
            "config file cfg.yaml: params.fusion_threshold_mb: must be an integer (line 2)");
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

TEST(ConfigFileTest, FlagsOverrideTheFile) {
  EngineSettings file, flags;
  file.fusion_threshold_mb = 8;
  file.cycle_time_ms = 1;
  flags.cycle_time_ms = 5;
  EngineSettings merged = flags.overriding(file);
  EXPECT_EQ(merged.fusion_threshold_mb, 8);
  EXPECT_EQ(merged.cycle_time_ms, 5);
}

}  // namespace
}  // namespace kolo::runner
