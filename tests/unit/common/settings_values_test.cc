// settings::Values: every setting read through a lookup, with the table's
// defaults, HOROVOD_ aliases, the syntax of each kind, ranges, and errors
// that name the variable as the user spelled it.
#include <gtest/gtest.h>

#include <map>

#include "common/error.h"
#include "common/settings/value_text.h"
#include "common/settings/values.h"

namespace kolo::settings {
namespace {

using std::chrono::microseconds;
using std::chrono::milliseconds;

Lookup from(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto it = vars.find(std::string(name));
    if (it == vars.end()) return std::nullopt;
    return it->second;
  };
}

std::string refusal(std::map<std::string, std::string> vars) {
  try {
    Values::Read(from(std::move(vars)));
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "accepted";
  return "";
}

TEST(SettingsValues, DefaultsComeFromTheTable) {
  const Values v = Values::Read(from({}));
  EXPECT_EQ(v.bytes("KOLO_FUSION_THRESHOLD"), uint64_t{128} << 20);
  EXPECT_EQ(v.duration<microseconds>("KOLO_CYCLE_TIME"), microseconds(1000));
  EXPECT_EQ(v.integer("KOLO_CACHE_CAPACITY"), 1024);
  EXPECT_TRUE(v.boolean("KOLO_SHM"));
  EXPECT_EQ(v.text("KOLO_TCP_CONGESTION"), "auto");
  EXPECT_EQ(v.text("KOLO_LOG_LEVEL"), "warning");
  EXPECT_EQ(v.text("KOLO_TIMELINE"), "");
  EXPECT_FALSE(v.is_set("KOLO_FUSION_THRESHOLD"));
  EXPECT_FALSE(v.is_set("KOLO_LOCAL_RANK"));
}

TEST(SettingsValues, AliasesWorkAndKoloNamesWin) {
  Values v = Values::Read(from({{"HOROVOD_CACHE_CAPACITY", "7"}}));
  EXPECT_EQ(v.integer("KOLO_CACHE_CAPACITY"), 7);
  EXPECT_TRUE(v.is_set("KOLO_CACHE_CAPACITY"));
  v = Values::Read(from({{"HOROVOD_CACHE_CAPACITY", "7"}, {"KOLO_CACHE_CAPACITY", "9"}}));
  EXPECT_EQ(v.integer("KOLO_CACHE_CAPACITY"), 9);
  // The error names the variable the user set.
  EXPECT_EQ(refusal({{"HOROVOD_CYCLE_TIME", "0"}}),
            "HOROVOD_CYCLE_TIME='0' must be above 0 and at most 10000 milliseconds");
}

TEST(SettingsValues, ChoicesAndBooleansIgnoreCase) {
  const Values v = Values::Read(from({{"KOLO_LOG_LEVEL", "DEBUG"},
                                      {"KOLO_SHM", "Off"},
                                      {"KOLO_SHM_SINGLE_COPY", "TRUE"},
                                      {"KOLO_ALLREDUCE_ALGORITHM", "Ring"}}));
  EXPECT_EQ(v.text("KOLO_LOG_LEVEL"), "debug");
  EXPECT_FALSE(v.boolean("KOLO_SHM"));
  EXPECT_EQ(v.text("KOLO_SHM_SINGLE_COPY"), "1");  // a choice's first spelling
  EXPECT_EQ(v.text("KOLO_ALLREDUCE_ALGORITHM"), "ring");
  EXPECT_EQ(Values::Read(from({{"KOLO_LOG_LEVEL", "fatal"}})).text("KOLO_LOG_LEVEL"), "error");
  EXPECT_EQ(Values::Read(from({{"KOLO_LOG_LEVEL", "Warn"}})).text("KOLO_LOG_LEVEL"), "warning");
}

TEST(SettingsValues, EachKindRefusesWhatItCannotBe) {
  EXPECT_EQ(refusal({{"KOLO_SHM", "maybe"}}),
            "KOLO_SHM='maybe' is not a boolean (1/0, true/false, yes/no, on/off)");
  EXPECT_EQ(refusal({{"KOLO_TCP_STREAMS", "2.5"}}), "KOLO_TCP_STREAMS='2.5' is not an integer");
  EXPECT_EQ(refusal({{"KOLO_TCP_STREAMS", "17"}}),
            "KOLO_TCP_STREAMS='17' must be between 1 and 16");
  EXPECT_EQ(refusal({{"KOLO_SHM_SLOT_BYTES", "1K"}}),
            "KOLO_SHM_SLOT_BYTES='1K' must be between 4K and 1G");
  EXPECT_EQ(refusal({{"KOLO_FUSION_THRESHOLD", "lots"}}),
            "KOLO_FUSION_THRESHOLD='lots' is not a size (e.g. 4096, 256K, 64M)");
  EXPECT_EQ(refusal({{"KOLO_TIMEOUT_SECONDS", "0"}}),
            "KOLO_TIMEOUT_SECONDS='0' must be above 0 seconds");
  EXPECT_EQ(refusal({{"KOLO_STALL_SHUTDOWN_TIME_SECONDS", "-1"}}),
            "KOLO_STALL_SHUTDOWN_TIME_SECONDS='-1' must be 0 or more seconds");
  EXPECT_EQ(refusal({{"KOLO_CACHE_CAPACITY", "-1"}}),
            "KOLO_CACHE_CAPACITY='-1' must be between 0 and 1048576");
  EXPECT_EQ(refusal({{"KOLO_BROADCAST_ALGORITHM", "star"}}),
            "KOLO_BROADCAST_ALGORITHM='star' is not one of auto, tree, pipelined");
  EXPECT_EQ(refusal({{"KOLO_TCP_CONGESTION", "a b"}}),
            "KOLO_TCP_CONGESTION='a b' is not a name (letters, digits, '_' and '-', up to 15 "
            "characters)");
  EXPECT_EQ(refusal({{"KOLO_RENDEZVOUS_PORT", "70000"}}),
            "KOLO_RENDEZVOUS_PORT='70000' must be between 0 and 65535");
}

TEST(SettingsValues, DurationsKeepTheirUnitAndTruncate) {
  const Values v =
      Values::Read(from({{"KOLO_CYCLE_TIME", "2.5"}, {"KOLO_TIMEOUT_SECONDS", "0.0015"}}));
  EXPECT_EQ(v.duration<microseconds>("KOLO_CYCLE_TIME"), microseconds(2500));
  EXPECT_EQ(v.duration<milliseconds>("KOLO_TIMEOUT_SECONDS"), milliseconds(1));
  EXPECT_EQ(v.duration<milliseconds>("KOLO_START_TIMEOUT"), milliseconds(60000));
}

TEST(SettingsValues, PlainNumbersKeepFractionsAndTheirRange) {
  EXPECT_EQ(Values().number("KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE"), 0.8);
  EXPECT_EQ(Values::Read(from({{"HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE", "0.25"}}))
                .number("KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE"),
            0.25);
  EXPECT_EQ(refusal({{"KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE", "loud"}}),
            "KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE='loud' is not a number");
  EXPECT_EQ(refusal({{"KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE", "1.5"}}),
            "KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE='1.5' must be between 0 and 1");
}

TEST(SettingsValues, TheStallShutdownMustFollowTheWarning) {
  EXPECT_EQ(refusal({{"KOLO_STALL_CHECK_TIME_SECONDS", "30"},
                     {"KOLO_STALL_SHUTDOWN_TIME_SECONDS", "10"}}),
            "KOLO_STALL_SHUTDOWN_TIME_SECONDS (10 s) must be 0 or at least "
            "KOLO_STALL_CHECK_TIME_SECONDS (30 s)");
  EXPECT_NO_THROW(Values::Read(
      from({{"KOLO_STALL_CHECK_TIME_SECONDS", "30"}, {"KOLO_STALL_SHUTDOWN_TIME_SECONDS", "0"}})));
}

TEST(SettingsValues, SetChecksLikeTheEnvironment) {
  Values v;
  v.set("KOLO_SHM", "0");
  EXPECT_FALSE(v.boolean("KOLO_SHM"));
  EXPECT_THROW(v.set("KOLO_SHM", "sometimes"), InvalidArgument);
  EXPECT_THROW(v.set("KOLO_NO_SUCH_SETTING", "1"), InvalidArgument);
}

TEST(SettingsValues, ReadOneGivesTheDefaultOrTheValue) {
  EXPECT_EQ(read_one("KOLO_SIMD", from({})), "auto");
  EXPECT_EQ(read_one("KOLO_LOG_LEVEL", from({{"HOROVOD_LOG_LEVEL", "INFO"}})), "info");
  EXPECT_THROW(read_one("KOLO_SIMD", from({{"KOLO_SIMD", "sse9"}})), InvalidArgument);
}

TEST(SettingsValues, ReadingAsTheWrongKindIsABug) {
  const Values v;
  try {
    v.boolean("KOLO_FUSION_THRESHOLD");
    ADD_FAILURE() << "a size read as a bool";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("KOLO_FUSION_THRESHOLD is a size setting, read as a bool"),
              std::string::npos)
        << e.what();
  }
}

TEST(SettingsValues, SecretsAreNotDescribed) {
  const Values v = Values::Read(from({{"KOLO_SECRET", "hunter2"}}));
  EXPECT_EQ(v.Describe().find("hunter2"), std::string::npos);
  EXPECT_NE(v.Describe().find("KOLO_SECRET=(set)"), std::string::npos);
}

TEST(SettingsValueText, Sizes) {
  EXPECT_EQ(parse_size("8"), 8u);
  EXPECT_EQ(parse_size("4K"), 4096u);
  EXPECT_EQ(parse_size("256M"), 256u << 20);
  EXPECT_EQ(parse_size("1.5G"), 3u << 29);
  EXPECT_EQ(parse_size("12Q"), std::nullopt);
  EXPECT_EQ(parse_size("-1"), std::nullopt);
  EXPECT_EQ(parse_size(""), std::nullopt);
  EXPECT_EQ(format_size(1048576), "1M");
  EXPECT_EQ(format_size(4096), "4K");
  EXPECT_EQ(format_size(1000), "1000");
  EXPECT_EQ(format_number(2.5), "2.5");
  EXPECT_EQ(format_number(60), "60");
}

}  // namespace
}  // namespace kolo::settings
