// docs/config.md's tables, made from settings/table.h. The page keeps its
// prose; each generated block sits between two markers:
//
//   <!-- settings: Engine -->        the table of that section
//   <!-- settings-flags -->          kolorun's flags and config-file keys
//   <!-- /settings -->               end of a block
//
// `kolo-config-doc docs/config.md` rewrites the blocks; a unit test fails
// when the page and the table differ.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kolo::settings {

// The sections of the table, in order of first appearance.
std::vector<std::string_view> sections();
std::string section_table(std::string_view section);
std::string flags_table();
// `page` with every generated block replaced by what the table gives now.
// Throws InvalidArgument for an unknown section or a block without its end.
std::string regenerate(std::string_view page);

}  // namespace kolo::settings
