// Reading a source tree's #include lines, for the layering test.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

namespace kolo::testing {

// The paths that `text` includes, quoted or bracketed, in order.
std::vector<std::string> includes_of(std::string_view text);

// The C and C++ sources at `path` (relative to `root`): the file itself, or
// every source under the folder, sorted; empty when nothing is there.
std::vector<std::filesystem::path> source_files(const std::filesystem::path& root,
                                                const std::filesystem::path& path);

std::string read_text(const std::filesystem::path& file);

}  // namespace kolo::testing
