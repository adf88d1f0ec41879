// --mpi-args and --binding-args are split as a POSIX shell splits words,
// without expanding anything.
#include "runner/shell_words.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace kolo::runner {
namespace {

using Words = std::vector<std::string>;

Words split(const std::string& text) {
  return split_shell_words(text, "--mpi-args");
}

TEST(ShellWords, BlanksSeparateWords) {
  EXPECT_EQ(split(""), Words{});
  EXPECT_EQ(split("   \t "), Words{});
  EXPECT_EQ(split("--map-by ppr:6:node"), (Words{"--map-by", "ppr:6:node"}));
  EXPECT_EQ(split("  -x  A=1\t--mca btl ^openib\n"),
            (Words{"-x", "A=1", "--mca", "btl", "^openib"}));
}

TEST(ShellWords, QuotesAndBackslashes) {
  EXPECT_EQ(split("--mca plm_rsh_args '-p 22 -i key'"),
            (Words{"--mca", "plm_rsh_args", "-p 22 -i key"}));
  EXPECT_EQ(split(R"(-x "A=two words" -x B=\"q\")"), (Words{"-x", "A=two words", "-x", "B=\"q\""}));
  EXPECT_EQ(split(R"("a\"b\\c\d" 'x\y')"), (Words{R"(a"b\c\d)", R"(x\y)"}));
  EXPECT_EQ(split(R"(one\ word '' "")"), (Words{"one word", "", ""}));
  EXPECT_EQ(split("ab'cd'\"ef\""), (Words{"abcdef"}));
  // Nothing is expanded: the words reach mpirun as written.
  EXPECT_EQ(split("$HOME ~/x *.py"), (Words{"$HOME", "~/x", "*.py"}));
}

TEST(ShellWords, UnfinishedQuotingIsAnError) {
  EXPECT_THROW(split("'open"), InvalidArgument);
  EXPECT_THROW(split("\"open"), InvalidArgument);
  EXPECT_THROW(split("trailing\\"), InvalidArgument);
  try {
    split("--mca 'x");
    FAIL();
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "--mpi-args: unterminated ' quote in '--mca 'x'");
  }
}

TEST(ShellWords, QuotedLineSplitsBackIntoTheWords) {
  const Words words = {"mpirun", "--mca", "plm_rsh_args", "-p 22 -i /k/id", "it's", "", "$HOME"};
  const std::string line = shell_quoted(words);
  EXPECT_EQ(line, R"(mpirun --mca plm_rsh_args '-p 22 -i /k/id' 'it'\''s' '' '$HOME')");
  EXPECT_EQ(split(line), words);
}

}  // namespace
}  // namespace kolo::runner
