#include "common/log_limiter.h"

#include <fmt/format.h>

namespace kolo {
namespace {

constexpr std::string_view kOtherProblems = "(other problems)";

double seconds(std::chrono::milliseconds d) {
  return static_cast<double>(d.count()) / 1000.0;
}

}  // namespace

LogLimiter::LogLimiter(std::chrono::milliseconds interval, Sink sink, std::size_t max_problems)
    : interval_(interval), sink_(std::move(sink)), max_problems_(max_problems) {}

void LogLimiter::emit(LogLevel level, std::string_view line) const {
  if (sink_) {
    sink_(level, line);
  } else if (level >= log_threshold()) {
    log_write(level, line);
  }
}

void LogLimiter::flush_one(Problem& p) const {
  if (p.suppressed == 0) return;
  emit(p.level, fmt::format("{} ({} more like this in the last {:g} s)", p.last, p.suppressed,
                            seconds(interval_)));
  p.suppressed = 0;
  p.last.clear();
}

void LogLimiter::report(LogLevel level, std::string_view problem, std::string message,
                        Clock::time_point now) {
  std::lock_guard lock(mutex_);
  auto it = problems_.find(problem);
  if (it == problems_.end()) {
    const std::string_view key = problems_.size() < max_problems_ ? problem : kOtherProblems;
    it = problems_.find(key);
    if (it == problems_.end()) {
      Problem fresh;
      fresh.window_start = now;
      fresh.level = level;
      problems_.emplace(std::string(key), fresh);
      emit(level, message);
      return;
    }
  }
  Problem& p = it->second;
  if (now - p.window_start < interval_) {
    ++p.suppressed;
    p.level = level;
    p.last = std::move(message);
    return;
  }
  // A new interval: the old one's count first, then this occurrence.
  flush_one(p);
  p.window_start = now;
  p.level = level;
  emit(level, message);
}

void LogLimiter::flush(Clock::time_point now) {
  std::lock_guard lock(mutex_);
  for (auto& [name, p] : problems_) {
    if (p.suppressed == 0 || now - p.window_start < interval_) continue;
    flush_one(p);
    // The next occurrence opens a new interval and is logged at once.
    p.window_start = now - interval_;
  }
}

std::optional<LogLimiter::Clock::time_point> LogLimiter::next_flush() const {
  std::lock_guard lock(mutex_);
  std::optional<Clock::time_point> next;
  for (const auto& [name, p] : problems_)
    if (p.suppressed > 0 && (!next || p.window_start + interval_ < *next))
      next = p.window_start + interval_;
  return next;
}

}  // namespace kolo
