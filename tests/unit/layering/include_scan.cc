#include "unit/layering/include_scan.h"

#include <algorithm>
#include <array>
#include <fstream>
#include <sstream>

namespace kolo::testing {
namespace {

bool is_source(const std::filesystem::path& file) {
  static constexpr std::array<std::string_view, 5> kExtensions{".h", ".hpp", ".c", ".cc", ".cpp"};
  const std::string extension = file.extension().string();
  return std::find(kExtensions.begin(), kExtensions.end(), extension) != kExtensions.end();
}

// The path of an #include directive on `line`, or "" when the line is not
// one. (Parsed by hand: std::regex trips GCC 12's maybe-uninitialized
// warning in the ASan build.)
std::string include_path(std::string_view line) {
  auto skip_blanks = [&] {
    while (!line.empty() && (line.front() == ' ' || line.front() == '\t')) line.remove_prefix(1);
  };
  skip_blanks();
  if (!line.starts_with("#")) return "";
  line.remove_prefix(1);
  skip_blanks();
  if (!line.starts_with("include")) return "";
  line.remove_prefix(7);
  skip_blanks();
  if (line.empty() || (line.front() != '"' && line.front() != '<')) return "";
  const char close = line.front() == '"' ? '"' : '>';
  line.remove_prefix(1);
  const size_t end = line.find(close);
  if (end == std::string_view::npos || end == 0) return "";
  return std::string(line.substr(0, end));
}

}  // namespace

std::vector<std::string> includes_of(std::string_view text) {
  // Line by line: a directive starts its line (after blanks), so a mention
  // of a header inside a comment does not count.
  std::vector<std::string> paths;
  std::istringstream lines{std::string(text)};
  for (std::string line; std::getline(lines, line);) {
    if (std::string path = include_path(line); !path.empty()) paths.push_back(std::move(path));
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
