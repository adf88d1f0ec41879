#include "common/env.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "common/error.h"

namespace kolo::env {
namespace {

std::optional<std::pair<std::string, std::string>> lookup(std::initializer_list<const char*> names) {
  for (const char* name : names) {
    const char* value = std::getenv(name);
    if (value != nullptr && *value != '\0') return std::make_pair(std::string(name), std::string(value));
  }
  return std::nullopt;
}

[[noreturn]] void bad_value(const std::string& name, const std::string& value, const char* expected) {
  throw InvalidArgument("environment variable " + name + "='" + value + "' is not " + expected);
}

}  // namespace

std::optional<std::string> get_string(std::initializer_list<const char*> names) {
  auto found = lookup(names);
  if (!found) return std::nullopt;
  return found->second;
}

std::optional<int64_t> get_int(std::initializer_list<const char*> names) {
  auto found = lookup(names);
  if (!found) return std::nullopt;
  const std::string& text = found->second;
  char* end = nullptr;
  errno = 0;
  long long value = std::strtoll(text.c_str(), &end, 10);
  if (errno != 0 || end == text.c_str() || *end != '\0') bad_value(found->first, text, "an integer");
  return value;
}

std::optional<double> get_double(std::initializer_list<const char*> names) {
  auto found = lookup(names);
  if (!found) return std::nullopt;
  const std::string& text = found->second;
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || *end != '\0' || !std::isfinite(value))
    bad_value(found->first, text, "a number");
  return value;
}

std::optional<bool> get_bool(std::initializer_list<const char*> names) {
  auto found = lookup(names);
  if (!found) return std::nullopt;
  const std::string& v = found->second;
  if (v == "1" || v == "true" || v == "TRUE" || v == "True" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "FALSE" || v == "False" || v == "no" || v == "off") return false;
  bad_value(found->first, v, "a boolean (1/0, true/false, yes/no, on/off)");
}

std::optional<uint64_t> parse_size(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  double value = std::strtod(text.c_str(), &end);
  if (errno != 0 || end == text.c_str() || !(value >= 0) || !std::isfinite(value)) return std::nullopt;
  std::string suffix(end);
  double scale = 1;
  if (suffix.empty() || suffix == "B" || suffix == "b") scale = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KB" || suffix == "KiB") scale = 1024.0;
  else if (suffix == "M" || suffix == "m" || suffix == "MB" || suffix == "MiB") scale = 1024.0 * 1024;
  else if (suffix == "G" || suffix == "g" || suffix == "GB" || suffix == "GiB") scale = 1024.0 * 1024 * 1024;
  else return std::nullopt;
  double bytes = value * scale;
  if (bytes > 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(std::llround(bytes));
}

}  // namespace kolo::env
