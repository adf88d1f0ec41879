// LogLimiter: the first occurrence of a problem is logged at once, repeats
// within the interval are counted and logged as one line when it ends, and
// distinct problems are limited apart. Times are given, not slept.
#include "common/log_limiter.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kolo {
namespace {

using namespace std::chrono_literals;
using Clock = LogLimiter::Clock;

struct Lines {
  std::vector<std::string> lines;
  LogLimiter::Sink sink() {
    return [this](LogLevel, std::string_view line) { lines.emplace_back(line); };
  }
};

TEST(LogLimiter, AFloodOfOneProblemIsOneLineThenOneCountPerInterval) {
  Lines out;
  LogLimiter limiter(5s, out.sink());
  const auto t0 = Clock::now();
  for (int i = 0; i < 10000; ++i)
    limiter.report(LogLevel::kWarning, "bad MAC", "rejected peer " + std::to_string(i),
                   t0 + std::chrono::microseconds(i * 100));  // 1 s of churn
  ASSERT_EQ(out.lines, std::vector<std::string>{"rejected peer 0"});
  EXPECT_EQ(limiter.next_flush(), t0 + 5s);
  limiter.flush(t0 + 4s);
  EXPECT_EQ(out.lines.size(), 1u);
  limiter.flush(t0 + 5s);
  ASSERT_EQ(out.lines.size(), 2u);
  EXPECT_EQ(out.lines[1], "rejected peer 9999 (9999 more like this in the last 5 s)");
  EXPECT_FALSE(limiter.next_flush());
  // After a quiet interval the next one is logged at once again.
  limiter.report(LogLevel::kWarning, "bad MAC", "rejected peer again", t0 + 20s);
  EXPECT_EQ(out.lines.back(), "rejected peer again");
}

TEST(LogLimiter, DistinctProblemsAreLimitedApart) {
  Lines out;
  LogLimiter limiter(5s, out.sink());
  const auto t0 = Clock::now();
  limiter.report(LogLevel::kWarning, "bad MAC", "mac 1", t0);
  limiter.report(LogLevel::kWarning, "no hello", "hello 1", t0);
  limiter.report(LogLevel::kWarning, "bad MAC", "mac 2", t0 + 1s);
  limiter.report(LogLevel::kWarning, "no hello", "hello 2", t0 + 1s);
  EXPECT_EQ(out.lines, (std::vector<std::string>{"mac 1", "hello 1"}));
  // A repeat after the interval brings the count with it, then itself.
  limiter.report(LogLevel::kWarning, "bad MAC", "mac 3", t0 + 6s);
  EXPECT_EQ(out.lines,
            (std::vector<std::string>{"mac 1", "hello 1",
                                      "mac 2 (1 more like this in the last 5 s)", "mac 3"}));
}

TEST(LogLimiter, EverNewProblemNamesShareOneEntryPastTheBound) {
  Lines out;
  LogLimiter limiter(5s, out.sink(), /*max_problems=*/4);
  const auto t0 = Clock::now();
  for (int i = 0; i < 1000; ++i)
    limiter.report(LogLevel::kWarning, "problem " + std::to_string(i), "line " + std::to_string(i),
                   t0);
  // Four named problems and one shared entry for the rest.
  EXPECT_EQ(out.lines.size(), 5u);
  limiter.flush(t0 + 5s);
  ASSERT_EQ(out.lines.size(), 6u);
  EXPECT_EQ(out.lines.back(), "line 999 (995 more like this in the last 5 s)");
}

}  // namespace
}  // namespace kolo
