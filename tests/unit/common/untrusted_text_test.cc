// untrusted_text: script output and file lines quoted in messages are cut
// and escaped, so garbage cannot flood or garble a terminal.
#include "common/untrusted_text.h"

#include <gtest/gtest.h>

#include <string>

namespace kolo {
namespace {

TEST(UntrustedText, ShortPrintableTextIsUnchanged) {
  EXPECT_EQ(untrusted_text("host1:4"), "host1:4");
  EXPECT_EQ(untrusted_text(""), "");
}

TEST(UntrustedText, ControlAndNonAsciiBytesAreEscaped) {
  EXPECT_EQ(untrusted_text(std::string("a\nb\tc\x1b[2J\\\xff\0", 12)),
            "a\\nb\\tc\\x1b[2J\\\\\\xff\\x00");
}

TEST(UntrustedText, AQuoteCannotEndTheQuoteAroundIt) {
  EXPECT_EQ(untrusted_text("a'b"), "a\\x27b");
}

TEST(UntrustedText, LongTextIsCutAndSaysHowLongItWas) {
  const std::string line(100 * 1024, 'x');
  const std::string quoted = untrusted_text(line, 80);
  EXPECT_EQ(quoted, std::string(80, 'x') + "... (102400 bytes)");
  // An escape is never split at the cut.
  EXPECT_EQ(untrusted_text(std::string(10, '\x01'), 10), "\\x01\\x01... (10 bytes)");
}

}  // namespace
}  // namespace kolo
