// kolorun's side of the settings table: a flag's value in its unit becomes
// the setting's value, checked with the words a rank would use.
#include <gtest/gtest.h>

#include "common/error.h"
#include "common/settings/flags.h"
#include "common/settings/table.h"

namespace kolo::settings {
namespace {

const Spec& spec(std::string_view name) {
  return *find_spec(name);
}

std::string refusal(std::string_view name, std::string_view value, std::string_view written) {
  try {
    value_from_flag(spec(name), value, written);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << written << " " << value << " accepted";
  return "";
}

TEST(SettingsFlags, ValuesTakeTheFlagsUnit) {
  EXPECT_EQ(value_from_flag(spec("KOLO_FUSION_THRESHOLD"), "2", "--fusion-threshold-mb"),
            "2097152");
  EXPECT_EQ(value_from_flag(spec("KOLO_FUSION_THRESHOLD"), "0", "--fusion-threshold-mb"), "0");
  EXPECT_EQ(value_from_flag(spec("KOLO_CYCLE_TIME"), "2.5", "--cycle-time-ms"), "2.5");
  EXPECT_EQ(value_from_flag(spec("KOLO_IFACE"), "eth1,eth2", "--network-interfaces"), "eth1");
  EXPECT_EQ(value_from_flag(spec("KOLO_LOG_LEVEL"), "FATAL", "--log-level"), "error");
}

TEST(SettingsFlags, RefusalsCarryTheRanksWords) {
  // The launcher refuses what Config::FromEnv would, saying the same thing.
  EXPECT_EQ(refusal("KOLO_CYCLE_TIME", "0", "--cycle-time-ms"),
            "--cycle-time-ms 0: KOLO_CYCLE_TIME='0' must be above 0 and at most 10000 "
            "milliseconds");
  EXPECT_EQ(refusal("KOLO_FUSION_THRESHOLD", "lots", "--fusion-threshold-mb"),
            "--fusion-threshold-mb 'lots' is not a number");
  EXPECT_EQ(refusal("KOLO_STALL_CHECK_TIME_SECONDS", "0", "--stall-check-warning-time-seconds"),
            "--stall-check-warning-time-seconds 0: KOLO_STALL_CHECK_TIME_SECONDS='0' must be "
            "above 0 seconds");
  EXPECT_EQ(refusal("KOLO_LOG_LEVEL", "loud", "--log-level"),
            "--log-level loud: KOLO_LOG_LEVEL='loud' is not one of trace, debug, info, warning, "
            "error");
}

TEST(SettingsFlags, SwitchesAndTheirFileKeys) {
  EXPECT_EQ(value_from_switch(spec("KOLO_TIMELINE_MARK_CYCLES")), "1");
  EXPECT_EQ(value_from_file_switch(spec("KOLO_TIMELINE_MARK_CYCLES"), true), "1");
  EXPECT_EQ(value_from_file_switch(spec("KOLO_TIMELINE_MARK_CYCLES"), false), "0");
  // --no-stall-check disables; the file's stall_check.enabled says the opposite.
  EXPECT_EQ(value_from_switch(spec("KOLO_STALL_CHECK_DISABLE")), "1");
  EXPECT_EQ(value_from_file_switch(spec("KOLO_STALL_CHECK_DISABLE"), false), "1");
  EXPECT_EQ(value_from_file_switch(spec("KOLO_STALL_CHECK_DISABLE"), true), "0");
}

TEST(SettingsFlags, FlagNamesAndHelp) {
  const auto names = flag_names(spec("KOLO_IFACE"));
  ASSERT_EQ(names.size(), 2u);
  EXPECT_EQ(names[0], "--network-interface");
  EXPECT_EQ(names[1], "--network-interfaces");
  EXPECT_EQ(short_description(spec("KOLO_CACHE_CAPACITY")), "response-cache slots per process set");
}

}  // namespace
}  // namespace kolo::settings
