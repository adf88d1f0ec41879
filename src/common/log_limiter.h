// LogLimiter: one log line per distinct problem per interval, with counts.
// A problem that repeats (a client flooding the rendezvous store with bad
// connections, a discovery script that keeps failing) would otherwise write
// a line per occurrence; here the first occurrence in an interval is logged
// at once, the rest are counted, and the count is logged with the last one
// when the interval ends (flush) or the problem comes back after it.
//
// Not global: each log site's owner (the store server's loop, the elastic
// driver) holds its own limiter. Safe to call from several threads.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "common/logging.h"

namespace kolo {

class LogLimiter {
 public:
  using Clock = std::chrono::steady_clock;
  using Sink = std::function<void(LogLevel, std::string_view)>;

  // `sink`: where lines go; by default the process log (logging.h), which
  // applies KOLO_LOG_LEVEL. Distinct problems beyond `max_problems` share
  // one entry, so a stream of ever-new problem names stays bounded too.
  explicit LogLimiter(std::chrono::milliseconds interval, Sink sink = {},
                      std::size_t max_problems = 64);

  // `problem` names the kind of problem (without the parts that vary, such
  // as a peer's address); `message` is the full line.
  void report(LogLevel level, std::string_view problem, std::string message,
              Clock::time_point now = Clock::now());
  // Logs the counts of problems whose interval has ended.
  void flush(Clock::time_point now = Clock::now());
  // When flush() next has something to log; nullopt if nothing is counted.
  std::optional<Clock::time_point> next_flush() const;

 private:
  struct Problem {
    Clock::time_point window_start;
    int64_t suppressed = 0;  // since window_start, not logged
    LogLevel level = LogLevel::kWarning;
    std::string last;  // the last suppressed message
  };
  void emit(LogLevel level, std::string_view line) const;
  void flush_one(Problem& p) const;

  const std::chrono::milliseconds interval_;
  const Sink sink_;
  const std::size_t max_problems_;
  mutable std::mutex mutex_;
  std::map<std::string, Problem, std::less<>> problems_;
};

}  // namespace kolo
