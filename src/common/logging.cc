#include "common/logging.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>

namespace kolo {

bool parse_log_level(std::string_view text, LogLevel* out) {
  if (text == "trace") *out = LogLevel::kTrace;
  else if (text == "debug") *out = LogLevel::kDebug;
  else if (text == "info") *out = LogLevel::kInfo;
  else if (text == "warning" || text == "warn") *out = LogLevel::kWarning;
  else if (text == "error") *out = LogLevel::kError;
  else return false;
  return true;
}

LogLevel log_threshold() {
  // Read once: the level is a process-wide constant after start-up.
  static const LogLevel threshold = [] {
    LogLevel level = LogLevel::kWarning;
    for (const char* name : {"KOLO_LOG_LEVEL", "HOROVOD_LOG_LEVEL"}) {
      const char* value = std::getenv(name);
      if (value != nullptr && parse_log_level(value, &level)) break;
    }
    return level;
  }();
  return threshold;
}

void log_write(LogLevel level, std::string_view message) {
  static constexpr std::string_view kNames[] = {"TRACE", "DEBUG", "INFO", "WARNING", "ERROR"};
  auto now = std::chrono::system_clock::now().time_since_epoch();
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(now).count();
  // One write() per line so lines from threads and processes never interleave.
  std::string line = fmt::format("[kolo {}.{:03d} {} pid {}] {}\n", ms / 1000, ms % 1000,
                                 kNames[static_cast<int>(level)], ::getpid(), message);
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace kolo
