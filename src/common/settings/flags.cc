#include "common/settings/flags.h"

#include <fmt/format.h>

#include <cmath>
#include <cstdlib>

#include "common/error.h"
#include "common/settings/value_text.h"

namespace kolo::settings {
namespace {

// The flag's number in the setting's unit: --fusion-threshold-mb 2 is
// 2097152 bytes.
std::string scaled(const Spec& spec, std::string_view value, std::string_view written) {
  const std::string copy(value);
  char* end = nullptr;
  const double number = std::strtod(copy.c_str(), &end);
  if (copy.empty() || end != copy.c_str() + copy.size() || !std::isfinite(number))
    throw InvalidArgument(fmt::format("{} '{}' is not a number", written, value));
  return format_number(number * spec.flag.scale);
}

}  // namespace

std::string value_from_flag(const Spec& spec, std::string_view value, std::string_view written) {
  std::string text(value);
  if (spec.flag.form == FlagSpec::Form::kFirstOfList) text = text.substr(0, text.find(','));
  if (spec.flag.scale != 1) text = scaled(spec, value, written);
  try {
    return parse_value(spec, spec.name, text).text;
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(fmt::format("{} {}: {}", written, value, e.what()));
  }
}

std::string value_from_switch(const Spec& spec) {
  return parse_value(spec, spec.name, spec.flag.switch_value).text;
}

std::string value_from_off_switch(const Spec& spec) {
  return value_from_switch(spec) == "1" ? "0" : "1";
}

std::string value_from_file_switch(const Spec& spec, bool on) {
  const bool switch_on = value_from_switch(spec) == "1";
  return (on != spec.flag.inverted) == switch_on ? "1" : "0";
}

namespace {

std::vector<std::string_view> comma_list(std::string_view rest) {
  std::vector<std::string_view> names;
  while (!rest.empty()) {
    const size_t comma = rest.find(',');
    names.push_back(rest.substr(0, comma));
    rest = comma == std::string_view::npos ? std::string_view() : rest.substr(comma + 1);
  }
  return names;
}

}  // namespace

std::vector<std::string_view> flag_names(const Spec& spec) {
  return comma_list(spec.flag.names);
}

std::vector<std::string_view> off_flag_names(const Spec& spec) {
  return comma_list(spec.flag.off_names);
}

std::string_view short_description(const Spec& spec) {
  std::string_view d = spec.description;
  const size_t end = d.find_first_of(";.(");
  d = d.substr(0, end);
  while (!d.empty() && d.back() == ' ') d.remove_suffix(1);
  return d;
}

}  // namespace kolo::settings
