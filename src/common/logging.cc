#include "common/logging.h"

#include <unistd.h>

#include <chrono>
#include <string>

#include "common/error.h"
#include "common/settings/values.h"

namespace kolo {

namespace {

// `level` is KOLO_LOG_LEVEL's canonical value (settings/table.h).
LogLevel level_named(std::string_view level) {
  if (level == "trace") return LogLevel::kTrace;
  if (level == "debug") return LogLevel::kDebug;
  if (level == "info") return LogLevel::kInfo;
  if (level == "error") return LogLevel::kError;
  return LogLevel::kWarning;
}

}  // namespace

LogLevel log_threshold() {
  // Read once: the level is a process-wide constant after start-up. A bad
  // value logs at the default level here; Config::FromEnv refuses it at init.
  static const LogLevel threshold = [] {
    try {
      return level_named(settings::read_one("KOLO_LOG_LEVEL"));
    } catch (const InvalidArgument&) {
      return LogLevel::kWarning;
    }
  }();
  return threshold;
}

namespace {

// KOLO_LOG_HIDE_TIME (horovodrun --log-without-timestamp), read once like the level.
bool hide_time() {
  static const bool hide = [] {
    try {
      return settings::read_one("KOLO_LOG_HIDE_TIME") == "1";
    } catch (const InvalidArgument&) {
      return false;
    }
  }();
  return hide;
}

}  // namespace

void log_write(LogLevel level, std::string_view message) {
  static constexpr std::string_view kNames[] = {"TRACE", "DEBUG", "INFO", "WARNING", "ERROR"};
  std::string time;
  if (!hide_time()) {
    auto now = std::chrono::system_clock::now().time_since_epoch();
    auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
    time = fmt::format("{}.{:03d} ", ms / 1000, ms % 1000);
  }
  // One write() per line so lines from threads and processes never interleave.
  std::string line = fmt::format("[kolo {}{} pid {}] {}\n", time, kNames[static_cast<int>(level)],
                                 ::getpid(), message);
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace kolo
