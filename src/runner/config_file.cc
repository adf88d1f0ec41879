// horovodrun's --config-file, read with yaml-cpp.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <fstream>
#include <set>
#include <sstream>

#include "common/errno_text.h"
#include "common/error.h"
#include "runner/engine_settings.h"

namespace kolo::runner {
namespace {

class ConfigReader {
 public:
  ConfigReader(std::string origin, std::vector<std::string>* warnings)
      : origin_(std::move(origin)), warnings_(warnings) {}

  EngineSettings read(const YAML::Node& root) {
    EngineSettings s;
    if (root.IsNull()) return s;
    if (!root.IsMap()) fail("", "the file must be a mapping of sections (params:, timeline:, ...)");
    for (const auto& section : root) {
      const std::string name = section.first.as<std::string>();
      const YAML::Node& body = section.second;
      if (name == "params") {
        for_each_key(name, body, {"fusion_threshold_mb", "cycle_time_ms", "cache_capacity"},
                     {"hierarchical_allreduce", "hierarchical_allgather"},
                     [&](const std::string& key, const YAML::Node& v) {
                       if (key == "fusion_threshold_mb")
                         s.fusion_threshold_mb = as<int64_t>(name, key, v);
                       if (key == "cycle_time_ms") s.cycle_time_ms = as<double>(name, key, v);
                       if (key == "cache_capacity") s.cache_capacity = as<int64_t>(name, key, v);
                     });
      } else if (name == "timeline") {
        for_each_key(name, body, {"filename", "mark_cycles"}, {},
                     [&](const std::string& key, const YAML::Node& v) {
                       if (key == "filename") s.timeline_filename = as<std::string>(name, key, v);
                       if (key == "mark_cycles") s.timeline_mark_cycles = as<bool>(name, key, v);
                     });
      } else if (name == "stall_check") {
        for_each_key(name, body, {"enabled", "warning_time_seconds", "shutdown_time_seconds"}, {},
                     [&](const std::string& key, const YAML::Node& v) {
                       if (key == "enabled") s.stall_check = as<bool>(name, key, v);
                       if (key == "warning_time_seconds")
                         s.stall_warning_seconds = as<int64_t>(name, key, v);
                       if (key == "shutdown_time_seconds")
                         s.stall_shutdown_seconds = as<int64_t>(name, key, v);
                     });
      } else if (name == "logging") {
        for_each_key(name, body, {"level"}, {"with_timestamp"},
                     [&](const std::string& key, const YAML::Node& v) {
                       if (key == "level") s.log_level = as<std::string>(name, key, v);
                     });
      } else if (name == "autotune" || name == "library_options" || name == "controller") {
        warn(fmt::format("section '{}' is horovodrun's but has no effect in Kolo; skipped", name));
      } else {
        fail(name, "unknown section (known: params, timeline, stall_check, logging)");
      }
    }
    return s;
  }

 private:
  template <typename Fn>
  void for_each_key(const std::string& section, const YAML::Node& body, std::set<std::string> known,
                    std::set<std::string> ignored, Fn&& apply) {
    if (body.IsNull()) return;
    if (!body.IsMap()) fail(section, "must be a mapping of keys");
    for (const auto& entry : body) {
      const std::string key = entry.first.as<std::string>();
      if (known.count(key)) {
        apply(key, entry.second);
      } else if (ignored.count(key)) {
        warn(fmt::format("{}.{} has no effect in Kolo; skipped", section, key));
      } else {
        fail(section + "." + key, "unknown key");
      }
    }
  }

  template <typename T>
  T as(const std::string& section, const std::string& key, const YAML::Node& value) {
    try {
      if (!value.IsScalar()) throw YAML::Exception(value.Mark(), "not a single value");
      return value.as<T>();
    } catch (const YAML::Exception&) {
      const char* expected = std::is_same_v<T, bool>          ? "true or false"
                             : std::is_same_v<T, std::string> ? "a string"
                             : std::is_integral_v<T>          ? "an integer"
                                                              : "a number";
      fail(section + "." + key,
           fmt::format("must be {} (line {})", expected, value.Mark().line + 1));
    }
  }

  void warn(const std::string& message) {
    if (warnings_) warnings_->push_back(fmt::format("{}: {}", origin_, message));
  }
  [[noreturn]] void fail(const std::string& where, const std::string& message) {
    throw InvalidArgument(where.empty()
                              ? fmt::format("config file {}: {}", origin_, message)
                              : fmt::format("config file {}: {}: {}", origin_, where, message));
  }

  std::string origin_;
  std::vector<std::string>* warnings_;
};

}  // namespace

EngineSettings parse_config_text(const std::string& text, const std::string& origin,
                                 std::vector<std::string>* warnings) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InvalidArgument(fmt::format("config file {} is not valid YAML: {}", origin, e.what()));
  }
  try {
    return ConfigReader(origin, warnings).read(root);
  } catch (const YAML::Exception& e) {
    throw InvalidArgument(fmt::format("config file {}: {}", origin, e.what()));
  }
}

EngineSettings load_config_file(const std::string& path, std::vector<std::string>* warnings) {
  std::ifstream in(path);
  if (!in)
    throw InvalidArgument(fmt::format("cannot read config file '{}': {}", path, errno_text(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return parse_config_text(text.str(), path, warnings);
}

}  // namespace kolo::runner
