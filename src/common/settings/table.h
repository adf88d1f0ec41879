// Every KOLO_* setting, declared once. Adding a setting is one entry in the
// part of the table its section belongs to (settings/sections/); everything
// else (parsing and checking, Config::Describe(), kolorun's flags,
// --config-file keys, docs/config.md) is derived from the joined table. The
// layer that uses a setting reads it from settings::Values by name, checked
// at compile time (settings/values.h).
//
// Sections appear in docs/config.md in the order of their first entry, so
// the parts are joined in the order the docs list them.
#pragma once

#include <array>
#include <cstddef>
#include <string_view>

#include "common/settings/sections/collectives.h"
#include "common/settings/sections/elastic.h"
#include "common/settings/sections/engine.h"
#include "common/settings/sections/launch.h"
#include "common/settings/sections/transport.h"
#include "common/settings/spec.h"

namespace kolo::settings {

// The parts laid end to end in one array, at compile time: the rest of the
// code indexes the table and takes an entry's position from its address, so
// it must be one contiguous array.
template <size_t... Sizes>
constexpr auto join_settings(const Spec (&... parts)[Sizes]) {
  std::array<Spec, (Sizes + ...)> table{};
  size_t next = 0;
  (([&] {
     for (const Spec& spec : parts) table[next++] = spec;
   }()),
   ...);
  return table;
}

inline constexpr auto kTable = join_settings(
    kLaunchSettings, kTransportSettings, kCollectiveSettings, kEngineSettings, kElasticSettings);

constexpr size_t kSettingCount = kTable.size();

// The index of the entry named `name` (KOLO_ spelling), kSettingCount when
// there is none. An index, not a pointer: GCC's -fsanitize=undefined makes
// pointer comparisons unusable in constant expressions, and settings::Name
// looks names up at compile time.
constexpr size_t index_of_setting(std::string_view name) {
  for (size_t i = 0; i < kSettingCount; ++i)
    if (kTable[i].name == name) return i;
  return kSettingCount;
}

// The entry named `name`, or nullptr.
constexpr const Spec* find_spec(std::string_view name) {
  const size_t i = index_of_setting(name);
  return i == kSettingCount ? nullptr : &kTable[i];
}

}  // namespace kolo::settings
