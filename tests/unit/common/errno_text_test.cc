#include "common/errno_text.h"

#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>

namespace kolo {
namespace {

TEST(ErrnoText, GivesTheSystemTextAndTheNumber) {
  EXPECT_EQ(errno_text(ENOENT),
            std::string(std::strerror(ENOENT)) + " (errno " + std::to_string(ENOENT) + ")");
  EXPECT_NE(errno_text(ECONNRESET).find("(errno " + std::to_string(ECONNRESET) + ")"),
            std::string::npos);
}

}  // namespace
}  // namespace kolo
