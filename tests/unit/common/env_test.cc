#include <gtest/gtest.h>

#include <cstdlib>

#include "common/env.h"
#include "common/error.h"

namespace kolo {
namespace {

TEST(Env, FirstSetNameWinsAndAliasesWork) {
  ::unsetenv("KOLO_TEST_A");
  ::setenv("HOROVOD_TEST_A", "7", 1);
  EXPECT_EQ(env::get_int({"KOLO_TEST_A", "HOROVOD_TEST_A"}), 7);
  ::setenv("KOLO_TEST_A", "9", 1);
  EXPECT_EQ(env::get_int({"KOLO_TEST_A", "HOROVOD_TEST_A"}), 9);
  ::unsetenv("KOLO_TEST_A");
  ::unsetenv("HOROVOD_TEST_A");
  EXPECT_EQ(env::get_int({"KOLO_TEST_A"}), std::nullopt);
}

TEST(Env, BadValuesNameTheVariable) {
  ::setenv("KOLO_TEST_B", "12abc", 1);
  try {
    env::get_int({"KOLO_TEST_B"});
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("KOLO_TEST_B='12abc'"), std::string::npos) << e.what();
  }
  ::setenv("KOLO_TEST_B", "maybe", 1);
  EXPECT_THROW(env::get_bool({"KOLO_TEST_B"}), InvalidArgument);
  ::setenv("KOLO_TEST_B", "on", 1);
  EXPECT_EQ(env::get_bool({"KOLO_TEST_B"}), true);
  ::unsetenv("KOLO_TEST_B");
}

TEST(Env, ParseSize) {
  EXPECT_EQ(env::parse_size("8"), 8u);
  EXPECT_EQ(env::parse_size("4K"), 4096u);
  EXPECT_EQ(env::parse_size("256M"), 256u << 20);
  EXPECT_EQ(env::parse_size("1.5G"), 3u << 29);
  EXPECT_EQ(env::parse_size("12Q"), std::nullopt);
  EXPECT_EQ(env::parse_size("-1"), std::nullopt);
  EXPECT_EQ(env::parse_size(""), std::nullopt);
}

}  // namespace
}  // namespace kolo
