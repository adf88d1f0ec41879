// horovodrun's --config-file, read with yaml-cpp. The keys of settings are
// their config_key (and off_config_key) in common/settings/table.h; the keys
// for features Kolo lacks are listed here; `controller` picks the launcher.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <utility>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/settings/flags.h"
#include "common/settings/table.h"
#include "runner/setting_flags.h"

namespace kolo::runner {
namespace {

using settings::FlagSpec;
using settings::Spec;

// horovodrun's keys for features Kolo lacks (runner/horovod_only.h), read
// with the type horovodrun gives them.
struct HorovodOnlyKey {
  const char* key;
  void (*store)(const YAML::Node& value, HorovodOnlyRequests& r);
};

template <typename T, std::optional<T> HorovodOnlyRequests::*field>
void store(const YAML::Node& value, HorovodOnlyRequests& r) {
  r.*field = value.as<T>();
}

constexpr HorovodOnlyKey kHorovodOnlyKeys[] = {
    {"params.torus_allreduce", store<bool, &HorovodOnlyRequests::torus_allreduce>},
    {"library_options.mpi_threads_disable", store<bool, &HorovodOnlyRequests::mpi_threads_disable>},
    {"library_options.num_nccl_streams", store<int, &HorovodOnlyRequests::num_nccl_streams>},
    {"library_options.ccl_bgt_affinity", store<int, &HorovodOnlyRequests::thread_affinity>},
};

const HorovodOnlyKey* horovod_only_key(const std::string& key) {
  for (const HorovodOnlyKey& k : kHorovodOnlyKeys)
    if (key == k.key) return &k;
  return nullptr;
}

std::string section_of(std::string_view key) {
  return std::string(key.substr(0, key.find('.')));
}

// Every section, in the order horovodrun's files list them.
std::vector<std::string> known_sections() {
  std::vector<std::string> names;
  auto add = [&](std::string_view key) {
    if (key.empty()) return;
    std::string section = section_of(key);
    if (std::find(names.begin(), names.end(), section) == names.end()) names.push_back(section);
  };
  for (const Spec& spec : settings::kTable) {
    add(spec.flag.config_key);
    add(spec.flag.off_config_key);
  }
  for (const HorovodOnlyKey& k : kHorovodOnlyKeys) add(k.key);
  return names;
}

// The setting a key sets, and whether the key means the switch's opposite.
std::pair<const Spec*, bool> spec_for_key(const std::string& key) {
  for (const Spec& spec : settings::kTable) {
    if (!spec.flag.config_key.empty() && spec.flag.config_key == key) return {&spec, false};
    if (!spec.flag.off_config_key.empty() && spec.flag.off_config_key == key) return {&spec, true};
  }
  return {nullptr, false};
}

class ConfigReader {
 public:
  explicit ConfigReader(std::string origin) : origin_(std::move(origin)) {}

  ConfigFile read(const YAML::Node& root) {
    ConfigFile file;
    if (root.IsNull()) return file;
    if (!root.IsMap()) fail("", "the file must be a mapping of sections (params:, timeline:, ...)");
    const std::vector<std::string> sections = known_sections();
    for (const auto& section : root) {
      const std::string name = section.first.as<std::string>();
      if (name == "controller") {
        file.controller = controller(section.second);
      } else if (std::find(sections.begin(), sections.end(), name) != sections.end()) {
        read_section(name, section.second, file);
      } else {
        fail(name,
             fmt::format("unknown section (known: controller, {})", fmt::join(sections, ", ")));
      }
    }
    return file;
  }

 private:
  // horovodrun's `controller: gloo|mpi` (any case), as --gloo or --mpi.
  std::string controller(const YAML::Node& node) {
    std::string value = node.IsScalar() ? node.Scalar() : "";
    std::transform(value.begin(), value.end(), value.begin(),
                   [](unsigned char c) { return std::tolower(c); });
    if (value != "gloo" && value != "mpi")
      fail("controller", fmt::format("must be gloo or mpi (line {})", node.Mark().line + 1));
    return value;
  }

  void read_section(const std::string& section, const YAML::Node& body, ConfigFile& file) {
    if (body.IsNull()) return;
    if (!body.IsMap()) fail(section, "must be a mapping of keys");
    for (const auto& entry : body) {
      const std::string key = section + "." + entry.first.as<std::string>();
      if (const auto [spec, opposite] = spec_for_key(key); spec != nullptr) {
        file.settings[std::string(spec->name)] = value(*spec, key, entry.second, opposite);
      } else if (const HorovodOnlyKey* k = horovod_only_key(key)) {
        if (!entry.second.IsScalar())
          fail(key, fmt::format("must be a single value (line {})", entry.second.Mark().line + 1));
        try {
          k->store(entry.second, file.horovod_only);
        } catch (const YAML::Exception&) {
          fail(key, fmt::format("'{}' is not a value of the right kind (line {})",
                                entry.second.Scalar(), entry.second.Mark().line + 1));
        }
      } else {
        fail(key, "unknown key");
      }
    }
  }

  std::string value(const Spec& spec, const std::string& key, const YAML::Node& node,
                    bool opposite) {
    if (!node.IsScalar())
      fail(key, fmt::format("must be a single value (line {})", node.Mark().line + 1));
    if (spec.flag.form == FlagSpec::Form::kSwitch) {
      bool on = false;
      if (!YAML::convert<bool>::decode(node, on))
        fail(key, fmt::format("must be true or false (line {})", node.Mark().line + 1));
      return settings::value_from_file_switch(spec, on != opposite);
    }
    return settings::value_from_flag(spec, node.Scalar(),
                                     fmt::format("config file {}: {}", origin_, key));
  }

  [[noreturn]] void fail(const std::string& where, const std::string& message) {
    throw InvalidArgument(where.empty()
                              ? fmt::format("config file {}: {}", origin_, message)
                              : fmt::format("config file {}: {}: {}", origin_, where, message));
  }

  std::string origin_;
};

}  // namespace

ConfigFile parse_config_text(const std::string& text, const std::string& origin) {
  YAML::Node root;
  try {
    root = YAML::Load(text);
  } catch (const YAML::Exception& e) {
    throw InvalidArgument(fmt::format("config file {} is not valid YAML: {}", origin, e.what()));
  }
  try {
    return ConfigReader(origin).read(root);
  } catch (const YAML::Exception& e) {
    throw InvalidArgument(fmt::format("config file {}: {}", origin, e.what()));
  }
}

ConfigFile load_config_file(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw InvalidArgument(fmt::format("cannot read config file '{}': {}", path, errno_text(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return parse_config_text(text.str(), path);
}

}  // namespace kolo::runner
