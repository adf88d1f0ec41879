// Leveled logging to stderr. The threshold comes from KOLO_LOG_LEVEL
// (trace, debug, info, warning, error, any case; default warning), read once.
#pragma once

#include <fmt/format.h>

#include <string_view>

namespace kolo {

enum class LogLevel : int { kTrace = 0, kDebug = 1, kInfo = 2, kWarning = 3, kError = 4 };

LogLevel log_threshold();
void log_write(LogLevel level, std::string_view message);

template <typename... Args>
void log(LogLevel level, fmt::format_string<Args...> format, Args&&... args) {
  if (level < log_threshold()) return;
  log_write(level, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace kolo

#define KOLO_LOG_TRACE(...) ::kolo::log(::kolo::LogLevel::kTrace, __VA_ARGS__)
#define KOLO_LOG_DEBUG(...) ::kolo::log(::kolo::LogLevel::kDebug, __VA_ARGS__)
#define KOLO_LOG_INFO(...) ::kolo::log(::kolo::LogLevel::kInfo, __VA_ARGS__)
#define KOLO_LOG_WARNING(...) ::kolo::log(::kolo::LogLevel::kWarning, __VA_ARGS__)
#define KOLO_LOG_ERROR(...) ::kolo::log(::kolo::LogLevel::kError, __VA_ARGS__)
