#include "unit/layering/include_scan.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <regex>
#include <sstream>

namespace kolo::testing {
namespace {

bool is_source(const std::filesystem::path& file) {
  static constexpr std::array<std::string_view, 5> kExtensions{".h", ".hpp", ".c", ".cc", ".cpp"};
  const std::string extension = file.extension().string();
  return std::find(kExtensions.begin(), kExtensions.end(), extension) != kExtensions.end();
}

}  // namespace

std::vector<std::string> includes_of(std::string_view text) {
  // Line by line: a directive starts its line (after blanks), so a mention
  // of a header inside a comment does not count.
  static const std::regex kInclude(R"(^\s*#\s*include\s*[<"]([^">]+)[">])");
  std::vector<std::string> paths;
  std::istringstream lines{std::string(text)};
  std::smatch match;
  for (std::string line; std::getline(lines, line);) {
    if (std::regex_search(line, match, kInclude)) paths.push_back(match[1]);
  }
  return paths;
}

std::vector<std::filesystem::path> source_files(const std::filesystem::path& root,
                                                const std::filesystem::path& path) {
  const std::filesystem::path at = root / path;
  std::vector<std::filesystem::path> files;
  if (std::filesystem::is_regular_file(at)) {
    files.push_back(at);
  } else if (std::filesystem::is_directory(at)) {
    for (const auto& entry : std::filesystem::recursive_directory_iterator(at)) {
      if (entry.is_regular_file() && is_source(entry.path())) files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read_text(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace kolo::testing
