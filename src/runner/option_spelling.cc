#include "runner/option_spelling.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/error.h"

namespace kolo::runner {
namespace {

// horovodrun's long options spelled with one dash, and their "--" names.
constexpr std::pair<const char*, const char*> kSingleDash[] = {
    {"-np", "--num-proc"},
    {"-cb", "--check-build"},
    {"-hostfile", "--hostfile"},
    {"-prefix-timestamp", "--prefix-output-with-timestamp"}};

bool starts_with(const std::string& text, const std::string& prefix) {
  return text.compare(0, prefix.size(), prefix) == 0;
}

[[noreturn]] void ambiguous(const std::string& name, const std::vector<std::string>& matches) {
  throw InvalidArgument(
      fmt::format("ambiguous option {}: could be {}", name, fmt::join(matches, ", ")));
}

// "-n", "-hostf": a prefix of one single-dash long option. argparse also
// reads "-hostf" as "-h ostf", so a word that starts with a one-letter
// option and abbreviates a long one is ambiguous there too.
std::string single_dash(const std::string& name, const std::string& value,
                        const std::vector<std::string>& short_names) {
  std::vector<std::string> matches;
  std::string target;
  for (const auto& [spelling, long_name] : kSingleDash) {
    if (name == spelling) return long_name + value;
    if (starts_with(spelling, name)) {
      matches.push_back(spelling);
      target = long_name;
    }
  }
  if (matches.empty()) return name + value;  // -p2222, -xA=1: CLI11 reads those
  const std::string letter = name.substr(0, 2);
  if (name.size() > 2 &&
      std::find(short_names.begin(), short_names.end(), letter) != short_names.end())
    matches.insert(matches.begin(), letter);
  if (matches.size() > 1) ambiguous(name, matches);
  return target + value;
}

}  // namespace

std::string canonical_option(const std::string& arg, const std::vector<std::string>& long_names,
                             const std::vector<std::string>& short_names) {
  if (arg.size() < 2 || arg[0] != '-' || arg == "--") return arg;
  const size_t eq = arg.find('=');
  const std::string name = arg.substr(0, eq);
  const std::string value = eq == std::string::npos ? "" : arg.substr(eq);
  if (arg[1] != '-') {
    if (std::find(short_names.begin(), short_names.end(), name) != short_names.end()) return arg;
    return single_dash(name, value, short_names);
  }
  if (std::find(long_names.begin(), long_names.end(), name) != long_names.end()) return arg;
  std::vector<std::string> matches;
  for (const auto& candidate : long_names)
    if (starts_with(candidate, name)) matches.push_back(candidate);
  if (matches.empty()) return arg;
  if (matches.size() > 1) ambiguous(name, matches);
  return matches.front() + value;
}

}  // namespace kolo::runner
