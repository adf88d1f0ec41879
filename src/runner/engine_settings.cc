#include "runner/engine_settings.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>

#include "common/error.h"

namespace kolo::runner {
namespace {

template <typename T>
void take(std::optional<T>& field, const std::optional<T>& fallback) {
  if (!field) field = fallback;
}

void require_non_negative(const std::optional<int64_t>& value, const char* flag) {
  if (value && *value < 0)
    throw InvalidArgument(fmt::format("{} must be 0 or more, not {}", flag, *value));
}

}  // namespace

std::optional<std::string> normalize_log_level(const std::string& level) {
  std::string lower = level;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return std::tolower(c); });
  if (lower == "fatal") return "error";
  if (lower == "warn") return "warning";
  for (const char* known : {"trace", "debug", "info", "warning", "error"})
    if (lower == known) return lower;
  return std::nullopt;
}

EngineSettings EngineSettings::overriding(const EngineSettings& fallback) const {
  EngineSettings s = *this;
  take(s.fusion_threshold_mb, fallback.fusion_threshold_mb);
  take(s.cycle_time_ms, fallback.cycle_time_ms);
  take(s.cache_capacity, fallback.cache_capacity);
  take(s.timeline_filename, fallback.timeline_filename);
  take(s.timeline_mark_cycles, fallback.timeline_mark_cycles);
  take(s.stall_check, fallback.stall_check);
  take(s.stall_warning_seconds, fallback.stall_warning_seconds);
  take(s.stall_shutdown_seconds, fallback.stall_shutdown_seconds);
  take(s.log_level, fallback.log_level);
  return s;
}

void EngineSettings::validate() const {
  require_non_negative(fusion_threshold_mb, "--fusion-threshold-mb");
  require_non_negative(cache_capacity, "--cache-capacity");
  require_non_negative(stall_warning_seconds, "--stall-check-warning-time-seconds");
  require_non_negative(stall_shutdown_seconds, "--stall-check-shutdown-time-seconds");
  if (cycle_time_ms && !(*cycle_time_ms >= 0))
    throw InvalidArgument(fmt::format("--cycle-time-ms must be 0 or more, not {}", *cycle_time_ms));
  if (fusion_threshold_mb && *fusion_threshold_mb > (int64_t{1} << 30))
    throw InvalidArgument(
        fmt::format("--fusion-threshold-mb {} is too large", *fusion_threshold_mb));
  if (log_level && !normalize_log_level(*log_level))
    throw InvalidArgument(fmt::format(
        "--log-level '{}' is not one of TRACE, DEBUG, INFO, WARNING, ERROR, FATAL", *log_level));
}

Environment EngineSettings::to_environment() const {
  Environment env;
  if (fusion_threshold_mb)
    env["KOLO_FUSION_THRESHOLD"] = std::to_string(*fusion_threshold_mb * 1048576);
  if (cycle_time_ms) env["KOLO_CYCLE_TIME"] = fmt::format("{}", *cycle_time_ms);
  if (cache_capacity) env["KOLO_CACHE_CAPACITY"] = std::to_string(*cache_capacity);
  if (timeline_filename) env["KOLO_TIMELINE"] = *timeline_filename;
  if (timeline_mark_cycles) env["KOLO_TIMELINE_MARK_CYCLES"] = *timeline_mark_cycles ? "1" : "0";
  if (stall_check && !*stall_check) env["KOLO_STALL_CHECK_DISABLE"] = "1";
  if (stall_warning_seconds)
    env["KOLO_STALL_CHECK_TIME_SECONDS"] = std::to_string(*stall_warning_seconds);
  if (stall_shutdown_seconds)
    env["KOLO_STALL_SHUTDOWN_TIME_SECONDS"] = std::to_string(*stall_shutdown_seconds);
  if (log_level) env["KOLO_LOG_LEVEL"] = normalize_log_level(*log_level).value_or(*log_level);
  return env;
}

}  // namespace kolo::runner
