#include "core/launch/openmpi_nodes.h"

#include <fmt/format.h>

#include <charconv>
#include <optional>

namespace kolo::launch {
namespace {

std::optional<long> number(std::string_view text) {
  long value = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  if (ec != std::errc() || ptr != end || text.empty()) return std::nullopt;
  return value;
}

// Splits at `separator` outside [...].
std::vector<std::string> split_outside_brackets(std::string_view text, char separator) {
  std::vector<std::string> parts(1);
  int depth = 0;
  for (char c : text) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == separator && depth == 0) {
      parts.emplace_back();
    } else {
      parts.back() += c;
    }
  }
  return parts;
}

// "prefix[digits:ranges]suffix" or a plain name; appends the names.
bool expand_item(const std::string& item, std::vector<std::string>& names) {
  const size_t open = item.find('[');
  if (open == std::string::npos) {
    if (item.empty() || item.find(']') != std::string::npos) return false;
    names.push_back(item);
    return true;
  }
  const size_t close = item.find(']', open);
  const size_t colon = item.find(':', open);
  if (close == std::string::npos || colon == std::string::npos || colon > close) return false;
  const auto digits = number(std::string_view(item).substr(open + 1, colon - open - 1));
  if (!digits || *digits < 0 || *digits > 20) return false;
  const std::string prefix = item.substr(0, open);
  const std::string suffix = item.substr(close + 1);
  for (const std::string& range :
       split_outside_brackets(std::string_view(item).substr(colon + 1, close - colon - 1), ',')) {
    const size_t dash = range.find('-');
    const auto first = number(std::string_view(range).substr(0, dash));
    const auto last =
        dash == std::string::npos ? first : number(std::string_view(range).substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first || *last - *first > 100000) return false;
    for (long n = *first; n <= *last; ++n)
      names.push_back(fmt::format("{}{:0{}}{}", prefix, n, *digits, suffix));
  }
  return true;
}

}  // namespace

std::vector<std::string> openmpi_node_names(const std::string& list) {
  std::vector<std::string> names;
  for (const std::string& item : split_outside_brackets(list, ','))
    if (!expand_item(item, names)) return {};
  return names;
}

std::string openmpi_node_name(const std::string& node_regex, const std::string& daemon_uri) {
  const size_t at = node_regex.rfind('@');
  const size_t dot = daemon_uri.find('.');
  const size_t semicolon = daemon_uri.find(';');
  if (at == std::string::npos || dot == std::string::npos || semicolon < dot) return "";
  const auto daemon = number(std::string_view(daemon_uri).substr(dot + 1, semicolon - dot - 1));
  const std::vector<std::string> names = openmpi_node_names(node_regex.substr(0, at));
  if (!daemon || names.empty()) return "";
  // "first(count),...": the daemons of the nodes in order; -1: no daemon.
  size_t node = 0;
  for (const std::string& range : split_outside_brackets(node_regex.substr(at + 1), ',')) {
    const size_t paren = range.find('(');
    const auto first = number(std::string_view(range).substr(0, paren));
    const auto count = paren == std::string::npos
                           ? std::optional<long>(1)
                           : number(std::string_view(range).substr(
                                 paren + 1, range.size() - paren - (range.back() == ')' ? 2 : 1)));
    if (!first || !count || *count < 0) return "";
    for (long i = 0; i < *count; ++i, ++node) {
      if (node >= names.size()) return "";
      if (*first >= 0 && *first + i == *daemon) return names[node];
    }
  }
  return "";
}

}  // namespace kolo::launch
