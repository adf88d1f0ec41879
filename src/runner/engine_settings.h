// The engine settings horovodrun takes as flags or from its --config-file,
// and the environment variables that carry them to every rank (the engine
// reads them in Config::FromEnv; docs/config.md lists them). Unset fields
// export nothing, so the engine's own defaults apply.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "runner/process.h"

namespace kolo::runner {

struct EngineSettings {
  std::optional<int64_t> fusion_threshold_mb;     // -> KOLO_FUSION_THRESHOLD in bytes
  std::optional<double> cycle_time_ms;            // -> KOLO_CYCLE_TIME (ms, may be fractional)
  std::optional<int64_t> cache_capacity;          // -> KOLO_CACHE_CAPACITY
  std::optional<std::string> timeline_filename;   // -> KOLO_TIMELINE
  std::optional<bool> timeline_mark_cycles;       // -> KOLO_TIMELINE_MARK_CYCLES
  std::optional<bool> stall_check;                // false -> KOLO_STALL_CHECK_DISABLE=1
  std::optional<int64_t> stall_warning_seconds;   // -> KOLO_STALL_CHECK_TIME_SECONDS
  std::optional<int64_t> stall_shutdown_seconds;  // -> KOLO_STALL_SHUTDOWN_TIME_SECONDS
  std::optional<std::string> log_level;           // -> KOLO_LOG_LEVEL (lower case)

  // Each field set here, else the one in `fallback` (flags over the file).
  EngineSettings overriding(const EngineSettings& fallback) const;
  // Throws InvalidArgument for negative numbers or an unknown log level.
  void validate() const;
  Environment to_environment() const;
};

// horovodrun's log levels (TRACE ... FATAL, any case) in Kolo's spelling;
// nullopt if unknown. FATAL maps to error, Kolo's highest level.
std::optional<std::string> normalize_log_level(const std::string& level);

// Reads horovodrun's YAML config file: sections params, timeline,
// stall_check and logging. Keys horovodrun knows that Kolo has no use for
// (autotune, library_options, controller, hierarchical_*) are skipped with
// a warning appended to `warnings`; anything else, a wrong type, or a file
// that is not YAML is an InvalidArgument naming the file and key.
EngineSettings load_config_file(const std::string& path, std::vector<std::string>* warnings);
EngineSettings parse_config_text(const std::string& text, const std::string& origin,
                                 std::vector<std::string>* warnings);

}  // namespace kolo::runner
