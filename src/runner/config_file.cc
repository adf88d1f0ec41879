// horovodrun's --config-file, read with yaml-cpp. The keys Kolo takes are
// the config_key of settings in common/settings/table.h.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <sstream>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/settings/flags.h"
#include "common/settings/table.h"
#include "runner/setting_flags.h"

namespace kolo::runner {
namespace {

using settings::FlagSpec;
using settings::Spec;

// horovodrun's sections and keys that mean nothing to Kolo: skipped with a
// warning, so a horovodrun file still works.
constexpr std::string_view kIgnoredSections[] = {"autotune", "library_options", "controller"};
constexpr std::string_view kIgnoredKeys[] = {
    "params.hierarchical_allreduce", "params.hierarchical_allgather", "logging.with_timestamp"};

const Spec* spec_for_key(const std::string& key) {
  for (const Spec& spec : settings::kTable)
    if (!spec.flag.config_key.empty() && spec.flag.config_key == key) return &spec;
  return nullptr;
}

bool known_section(const std::string& section) {
  for (const Spec& spec : settings::kTable) {
    const std::string_view key = spec.flag.config_key;
    if (key.substr(0, key.find('.')) == section) return true;
  }
  return false;
}

std::string known_sections() {
  std::vector<std::string> names;
  for (const Spec& spec : settings::kTable) {
    const std::string_view key = spec.flag.config_key;
    if (key.empty()) continue;
    std::string section(key.substr(0, key.find('.')));
    if (std::find(names.begin(), names.end(), section) == names.end()) names.push_back(section);
  }
  return fmt::format("{}", fmt::join(names, ", "));
}

template <typename List>
bool listed(const List& list, const std::string& name) {
  return std::find(std::begin(list), std::end(list), name) != std::end(list);
}

class ConfigReader {
 public:
  ConfigReader(std::string origin, std::vector<std::string>* warnings)
      : origin_(std::move(origin)), warnings_(warnings) {}

  Environment read(const YAML::Node& root) {
    Environment env;
    if (root.IsNull()) return env;
    if (!root.IsMap()) fail("", "the file must be a mapping of sections (params:, timeline:, ...)");
    for (const auto& section : root) {
      const std::string name = section.first.as<std::string>();
      if (known_section(name)) {
        read_section(name, section.second, env);
      } else if (listed(kIgnoredSections, name)) {
        warn(fmt::format("section '{}' is horovodrun's but has no effect in Kolo; skipped", name));
      } else {
        fail(name, fmt::format("unknown section (known: {})", known_sections()));
      }
    }
    return env;
  }

 private:
  void read_section(const std::string& section, const YAML::Node& body, Environment& env) {
    if (body.IsNull()) return;
    if (!body.IsMap()) fail(section, "must be a mapping of keys");
    for (const auto& entry : body) {
      const std::string key = section + "." + entry.first.as<std::string>();
      if (const Spec* spec = spec_for_key(key)) {
        env[std::string(spec->name)] = value(*spec, key, entry.second);
      } else if (listed(kIgnoredKeys, key)) {
        warn(fmt::format("{} has no effect in Kolo; skipped", key));
      } else {
        fail(key, "unknown key");
      }
    }
  }

  std::string value(const Spec& spec, const std::string& key, const YAML::Node& node) {
    if (!node.IsScalar())
      fail(key, fmt::format("must be a single value (line {})", node.Mark().line + 1));
    if (spec.flag.form == FlagSpec::Form::kSwitch) {
      bool on = false;
      if (!YAML::convert<bool>::decode(node, on))
        fail(key, fmt::format("must be true or false (line {})", node.Mark().line + 1));
      return settings::value_from_file_switch(spec, on);
    }
    return settings::value_from_flag(spec, node.Scalar(),
                                     fmt::format("config file {}: {}", origin_, key));
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

Environment parse_config_text(const std::string& text, const std::string& origin,
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

Environment load_config_file(const std::string& path, std::vector<std::string>* warnings) {
  std::ifstream in(path);
  if (!in)
    throw InvalidArgument(fmt::format("cannot read config file '{}': {}", path, errno_text(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return parse_config_text(text.str(), path, warnings);
}

}  // namespace kolo::runner
