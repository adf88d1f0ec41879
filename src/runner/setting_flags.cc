#include "runner/setting_flags.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/settings/flags.h"
#include "common/settings/table.h"
#include "common/settings/values.h"

namespace kolo::runner {

using settings::FlagSpec;

void SettingFlags::add_to(CLI::App& app) {
  const std::string group = "Engine settings (also in --config-file; see docs/config.md)";
  for (const settings::Spec& spec : settings::kTable) {
    if (spec.flag.form == FlagSpec::Form::kNone) continue;
    std::string names;
    for (std::string_view name : settings::flag_names(spec))
      names += (names.empty() ? "" : ",") + std::string(name);
    const std::string help = fmt::format("{} ({})", settings::short_description(spec), spec.name);
    if (spec.flag.form == FlagSpec::Form::kSwitch) {
      app.add_flag(names, switches_[&spec], help)->group(group);
      std::string off;
      for (std::string_view name : settings::off_flag_names(spec))
        off += (off.empty() ? "" : ",") + std::string(name);
      if (!off.empty())
        app.add_flag(off, off_switches_[&spec],
                     fmt::format("sets {} to {}", spec.name, settings::value_from_off_switch(spec)))
            ->group(group);
    } else {
      auto* option = app.add_option(names, values_[&spec], help)
                         ->type_name(std::string(spec.flag.value_name))
                         ->group(group);
      // horovodrun's --network-interface may be repeated; the setting takes the first.
      if (spec.flag.form == FlagSpec::Form::kFirstOfList)
        option->multi_option_policy(CLI::MultiOptionPolicy::TakeFirst);
    }
  }
}

Environment SettingFlags::given(const CLI::App& app) const {
  Environment env;
  for (const auto& [spec, value] : values_) {
    const std::string first(settings::flag_names(*spec).front());
    if (app.get_option(first)->count() == 0) continue;
    env[std::string(spec->name)] = settings::value_from_flag(*spec, value, first);
  }
  for (const auto& [spec, on] : switches_)
    if (on) env[std::string(spec->name)] = settings::value_from_switch(*spec);
  // As in horovodrun, where each pair is an argparse mutually exclusive group.
  for (const auto& [spec, off] : off_switches_) {
    if (!off) continue;
    if (switches_.at(spec))
      throw InvalidArgument(fmt::format("{} and {} cannot be given together",
                                        settings::flag_names(*spec).front(),
                                        settings::off_flag_names(*spec).front()));
    env[std::string(spec->name)] = settings::value_from_off_switch(*spec);
  }
  return env;
}

void check_rank_settings(const Environment& rank_environment) {
  settings::Values::Read([&](std::string_view name) -> std::optional<std::string> {
    const auto it = rank_environment.find(std::string(name));
    if (it == rank_environment.end() || it->second.empty()) return std::nullopt;
    return it->second;
  });
}

}  // namespace kolo::runner
