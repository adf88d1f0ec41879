#include "common/settings/value_text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <vector>

#include "common/error.h"

namespace kolo::settings {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::vector<std::string_view> split(std::string_view text, char separator) {
  std::vector<std::string_view> parts;
  size_t start = 0;
  while (true) {
    const size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string_view::npos ? end : end - start));
    if (end == std::string_view::npos) return parts;
    start = end + 1;
  }
}

std::optional<double> parse_number(std::string_view text) {
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(value))
    return std::nullopt;
  return value;
}

std::optional<int64_t> parse_integer(std::string_view text) {
  int64_t value = 0;
  const char* first = text.data();
  if (!text.empty() && *first == '+') ++first;
  const auto [end, error] = std::from_chars(first, text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size() || first == end) return std::nullopt;
  return value;
}

std::optional<bool> parse_bool(std::string_view text) {
  const std::string v = lower(text);
  if (v == "1" || v == "true" || v == "yes" || v == "on") return true;
  if (v == "0" || v == "false" || v == "no" || v == "off") return false;
  return std::nullopt;
}

std::string unit_of(Kind kind) {
  if (kind == Kind::kSeconds) return " seconds";
  if (kind == Kind::kMillis) return " milliseconds";
  return "";
}

std::string bound_text(const Spec& spec, double value) {
  return spec.kind == Kind::kSize ? format_size(static_cast<uint64_t>(value))
                                  : format_number(value);
}

// "" when `value` is within the range, else what the range asks for.
std::string range_problem(const Spec& spec, double value) {
  const Range& r = spec.range;
  const bool low = r.min_open ? !(value > r.min) : !(value >= r.min);
  const bool high = !(value <= r.max);
  if (!low && !high) return "";
  const std::string unit = unit_of(spec.kind);
  const bool has_min = std::isfinite(r.min), has_max = std::isfinite(r.max);
  if (has_min && has_max && r.min_open)
    return fmt::format("must be above {} and at most {}{}", bound_text(spec, r.min),
                       bound_text(spec, r.max), unit);
  if (has_min && has_max)
    return fmt::format("must be between {} and {}{}", bound_text(spec, r.min),
                       bound_text(spec, r.max), unit);
  if (has_min && r.min_open)
    return fmt::format("must be above {}{}", bound_text(spec, r.min), unit);
  if (has_min) return fmt::format("must be {} or more{}", bound_text(spec, r.min), unit);
  return fmt::format("must be at most {}{}", bound_text(spec, r.max), unit);
}

[[noreturn]] void refuse(std::string_view variable, std::string_view text,
                         const std::string& problem) {
  throw InvalidArgument(fmt::format("{}='{}' {}", variable, text, problem));
}

Parsed parse_choice(const Spec& spec, std::string_view variable, std::string_view text) {
  const std::string wanted = lower(text);
  for (std::string_view choice : split(spec.choices, '|')) {
    const auto spellings = split(choice, ',');
    for (std::string_view spelling : spellings)
      if (wanted == spelling) return Parsed{std::string(spellings.front())};
  }
  refuse(variable, text, fmt::format("is not one of {}", choice_list(spec)));
}

Parsed parse_name(const Spec& spec, std::string_view variable, std::string_view text) {
  const bool well_formed =
      !text.empty() && text.size() <= spec.range.max &&
      text.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") ==
          std::string_view::npos;
  if (!well_formed)
    refuse(variable, text,
           fmt::format("is not a name (letters, digits, '_' and '-', up to {} characters)",
                       format_number(spec.range.max)));
  return Parsed{std::string(text)};
}

}  // namespace

Parsed parse_value(const Spec& spec, std::string_view variable, std::string_view text) {
  Parsed p;
  switch (spec.kind) {
    case Kind::kBool: {
      const auto value = parse_bool(text);
      if (!value) refuse(variable, text, "is not a boolean (1/0, true/false, yes/no, on/off)");
      p.text = *value ? "1" : "0";
      p.integer = *value ? 1 : 0;
      p.number = p.integer;
      return p;
    }
    case Kind::kInt: {
      const auto value = parse_integer(text);
      if (!value) refuse(variable, text, "is not an integer");
      if (auto problem = range_problem(spec, static_cast<double>(*value)); !problem.empty())
        refuse(variable, text, problem);
      p.integer = *value;
      p.number = static_cast<double>(*value);
      p.text = std::to_string(*value);
      return p;
    }
    case Kind::kSize: {
      const auto value = parse_size(text);
      if (!value) refuse(variable, text, "is not a size (e.g. 4096, 256K, 64M)");
      if (auto problem = range_problem(spec, static_cast<double>(*value)); !problem.empty())
        refuse(variable, text, problem);
      p.bytes = *value;
      p.number = static_cast<double>(*value);
      p.text = std::to_string(*value);
      return p;
    }
    case Kind::kSeconds:
    case Kind::kMillis:
    case Kind::kNumber: {
      const auto value = parse_number(text);
      if (!value)
        refuse(variable, text,
               spec.kind == Kind::kNumber
                   ? std::string("is not a number")
                   : fmt::format("is not a number of{}", unit_of(spec.kind)));
      if (auto problem = range_problem(spec, *value); !problem.empty())
        refuse(variable, text, problem);
      p.number = *value;
      p.text = format_number(*value);
      return p;
    }
    case Kind::kName:
      return parse_name(spec, variable, text);
    case Kind::kChoice:
      return parse_choice(spec, variable, text);
    case Kind::kString:
      break;
  }
  p.text = std::string(text);
  return p;
}

std::optional<uint64_t> parse_size(std::string_view text) {
  if (text.empty()) return std::nullopt;
  const std::string copy(text);
  char* end = nullptr;
  const double value = std::strtod(copy.c_str(), &end);
  if (end == copy.c_str() || !(value >= 0) || !std::isfinite(value)) return std::nullopt;
  const std::string suffix(end);
  double scale = 0;
  if (suffix.empty() || suffix == "B" || suffix == "b")
    scale = 1;
  else if (suffix == "K" || suffix == "k" || suffix == "KB" || suffix == "KiB")
    scale = 1024.0;
  else if (suffix == "M" || suffix == "m" || suffix == "MB" || suffix == "MiB")
    scale = 1048576.0;
  else if (suffix == "G" || suffix == "g" || suffix == "GB" || suffix == "GiB")
    scale = 1073741824.0;
  else
    return std::nullopt;
  const double bytes = value * scale;
  if (bytes > 1.8e19) return std::nullopt;
  return static_cast<uint64_t>(std::round(bytes));
}

std::string format_size(uint64_t bytes) {
  static constexpr std::pair<uint64_t, const char*> kUnits[] = {
      {uint64_t{1} << 30, "G"}, {uint64_t{1} << 20, "M"}, {uint64_t{1} << 10, "K"}};
  for (const auto& [unit, suffix] : kUnits)
    if (bytes >= unit && bytes % unit == 0) return fmt::format("{}{}", bytes / unit, suffix);
  return std::to_string(bytes);
}

std::string format_number(double value) {
  if (value == std::floor(value) && std::fabs(value) < 1e15)
    return std::to_string(static_cast<int64_t>(value));
  std::string text = fmt::format("{:.6f}", value);
  text.erase(text.find_last_not_of('0') + 1);
  if (text.back() == '.') text.pop_back();
  return text;
}

std::string choice_list(const Spec& spec) {
  std::string out;
  for (std::string_view choice : split(spec.choices, '|')) {
    if (!out.empty()) out += ", ";
    out += choice.substr(0, choice.find(','));
  }
  return out;
}

}  // namespace kolo::settings
