// Config::FromEnv: the engine's settings with their defaults, the HOROVOD_*
// aliases, and clear errors for bad values. Each test sets only the
// variables it needs and clears them after (ctest runs every test in its
// own process).
#include "core/config.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "common/error.h"
#include "transport/shm/shm_settings.h"

namespace kolo {
namespace {

class ScopedEnv {
 public:
  ScopedEnv(std::initializer_list<std::pair<const char*, const char*>> vars) {
    for (const auto& [name, value] : vars) {
      names_.push_back(name);
      ::setenv(name, value, 1);
    }
  }
  ~ScopedEnv() {
    for (const auto* name : names_) ::unsetenv(name);
  }

 private:
  std::vector<const char*> names_;
};

TEST(Config, EngineDefaultsWithoutEnvironment) {
  Config c = Config::FromEnv();
  EXPECT_EQ(c.layout.size, 1);
  EXPECT_EQ(c.engine.fusion_threshold_bytes, 128u << 20);
  EXPECT_EQ(c.engine.cycle_time, std::chrono::microseconds(1000));
  EXPECT_EQ(c.engine.cache_capacity, 1024u);
  EXPECT_TRUE(c.engine.timeline_path.empty());
  EXPECT_TRUE(c.engine.stall_check_enabled);
  EXPECT_EQ(c.engine.stall_warning_time, std::chrono::seconds(60));
  EXPECT_EQ(c.engine.stall_shutdown_time.count(), 0);
}

TEST(Config, HorovodNamesAreAliasesAndKoloNamesWin) {
  ScopedEnv env{{"HOROVOD_FUSION_THRESHOLD", "1048576"},
                {"HOROVOD_CYCLE_TIME", "2.5"},
                {"HOROVOD_CACHE_CAPACITY", "7"},
                {"KOLO_CACHE_CAPACITY", "9"},
                {"HOROVOD_TIMELINE", "/tmp/t.json"},
                {"HOROVOD_TIMELINE_MARK_CYCLES", "1"},
                {"HOROVOD_STALL_CHECK_DISABLE", "true"},
                {"HOROVOD_STALL_CHECK_TIME_SECONDS", "5"},
                {"HOROVOD_STALL_SHUTDOWN_TIME_SECONDS", "20"},
                {"HOROVOD_RANK", "1"},
                {"HOROVOD_SIZE", "1"}};
  EXPECT_THROW(Config::FromEnv(), InvalidArgument) << "rank 1 of size 1";
  ::setenv("HOROVOD_SIZE", "2", 1);
  ::setenv("KOLO_RENDEZVOUS_ADDR", "127.0.0.1", 1);
  ::setenv("KOLO_RENDEZVOUS_PORT", "1234", 1);
  ::setenv("KOLO_SECRET", "s", 1);
  Config c = Config::FromEnv();
  ::unsetenv("KOLO_RENDEZVOUS_ADDR");
  ::unsetenv("KOLO_RENDEZVOUS_PORT");
  ::unsetenv("KOLO_SECRET");
  EXPECT_EQ(c.layout.rank, 1);
  EXPECT_EQ(c.layout.size, 2);
  EXPECT_EQ(c.engine.fusion_threshold_bytes, 1u << 20);
  EXPECT_EQ(c.engine.cycle_time, std::chrono::microseconds(2500));
  EXPECT_EQ(c.engine.cache_capacity, 9u);
  EXPECT_EQ(c.engine.timeline_path, "/tmp/t.json");
  EXPECT_TRUE(c.engine.timeline_mark_cycles);
  EXPECT_FALSE(c.engine.stall_check_enabled);
  EXPECT_EQ(c.engine.stall_warning_time, std::chrono::seconds(5));
  EXPECT_EQ(c.engine.stall_shutdown_time, std::chrono::seconds(20));
  EXPECT_NE(c.Describe().find("KOLO_CACHE_CAPACITY=9"), std::string::npos) << c.Describe();
}

void expect_rejected(const char* name, const char* value, const std::string& part) {
  ScopedEnv env{{name, value}};
  try {
    Config::FromEnv();
    ADD_FAILURE() << name << "=" << value << " was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(Config, BadEngineValuesNameTheVariable) {
  expect_rejected("KOLO_FUSION_THRESHOLD", "lots", "KOLO_FUSION_THRESHOLD");
  expect_rejected("KOLO_CYCLE_TIME", "0", "KOLO_CYCLE_TIME");
  expect_rejected("KOLO_CYCLE_TIME", "fast", "KOLO_CYCLE_TIME");
  expect_rejected("KOLO_CACHE_CAPACITY", "-1", "KOLO_CACHE_CAPACITY");
  expect_rejected("KOLO_CACHE_CAPACITY", "99999999", "KOLO_CACHE_CAPACITY");
  expect_rejected("KOLO_STALL_CHECK_TIME_SECONDS", "-3", "KOLO_STALL_CHECK_TIME_SECONDS");
  expect_rejected("KOLO_STALL_CHECK_DISABLE", "perhaps", "KOLO_STALL_CHECK_DISABLE");
  {
    ScopedEnv env{{"KOLO_STALL_CHECK_TIME_SECONDS", "30"}};
    expect_rejected("KOLO_STALL_SHUTDOWN_TIME_SECONDS", "10", "must be 0 or at least");
  }
}

transport::shm::ShmOptions shm_from_env() {
  return transport::shm::shm_options_from(Config::FromEnv().settings);
}

TEST(Config, SharedMemorySingleCopyModes) {
  using transport::shm::SingleCopy;
  EXPECT_EQ(shm_from_env().single_copy, SingleCopy::kAuto);
  EXPECT_EQ(shm_from_env().single_copy_bytes, 32u * 1024);
  for (auto [text, mode] : {std::pair{"auto", SingleCopy::kAuto}, std::pair{"1", SingleCopy::kOn},
                            std::pair{"on", SingleCopy::kOn}, std::pair{"0", SingleCopy::kOff},
                            std::pair{"off", SingleCopy::kOff}}) {
    ScopedEnv env{{"KOLO_SHM_SINGLE_COPY", text}, {"KOLO_SHM_SINGLE_COPY_BYTES", "1M"}};
    const transport::shm::ShmOptions shm = shm_from_env();
    EXPECT_EQ(shm.single_copy, mode) << text;
    EXPECT_EQ(shm.single_copy_bytes, 1u << 20);
  }
  expect_rejected("KOLO_SHM_SINGLE_COPY", "sometimes", "KOLO_SHM_SINGLE_COPY");
  expect_rejected("KOLO_SHM_SINGLE_COPY_BYTES", "big", "KOLO_SHM_SINGLE_COPY_BYTES");
}

TEST(Config, SharedMemoryStreamingThreshold) {
  EXPECT_EQ(shm_from_env().streaming_bytes, size_t{16} << 20);
  EXPECT_NE(Config::FromEnv().Describe().find("KOLO_SHM_STREAMING_BYTES=16777216"),
            std::string::npos);
  {
    ScopedEnv env{{"KOLO_SHM_STREAMING_BYTES", "8M"}};
    EXPECT_EQ(shm_from_env().streaming_bytes, size_t{8} << 20);
  }
  expect_rejected("KOLO_SHM_STREAMING_BYTES", "lots", "KOLO_SHM_STREAMING_BYTES");
}

}  // namespace
}  // namespace kolo
