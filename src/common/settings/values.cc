#include "common/settings/values.h"

#include <fmt/format.h>

#include <cstdlib>

#include "common/check.h"
#include "common/error.h"
#include "common/settings/value_text.h"

namespace kolo::settings {
namespace {

size_t index_of(const Spec& spec) {
  return static_cast<size_t>(&spec - kTable.data());
}

const Spec& spec_named(std::string_view name) {
  const Spec* spec = find_spec(name);
  if (spec == nullptr) throw InvalidArgument(fmt::format("{} is not a Kolo setting", name));
  return *spec;
}

const char* kind_name(Kind kind) {
  switch (kind) {
    case Kind::kBool:
      return "bool";
    case Kind::kInt:
      return "integer";
    case Kind::kSize:
      return "size";
    case Kind::kSeconds:
      return "seconds";
    case Kind::kMillis:
      return "milliseconds";
    case Kind::kNumber:
      return "number";
    case Kind::kString:
      return "string";
    case Kind::kName:
      return "name";
    case Kind::kChoice:
      return "choice";
  }
  return "?";
}

// The variable's spelling that is set (the KOLO_ name first, then the
// HOROVOD_ alias) and its text; nullopt when neither is.
std::optional<std::pair<std::string_view, std::string>> look_up(const Spec& spec,
                                                                const Lookup& lookup) {
  if (auto text = lookup(spec.name)) return std::make_pair(spec.name, std::move(*text));
  if (spec.alias.empty()) return std::nullopt;
  if (auto text = lookup(spec.alias)) return std::make_pair(spec.alias, std::move(*text));
  return std::nullopt;
}

}  // namespace

std::optional<std::string> from_environment(std::string_view name) {
  const char* value = std::getenv(std::string(name).c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

Values::Values() : entries_(kSettingCount) {
  for (const Spec& spec : kTable) {
    if (spec.fallback.empty()) continue;
    Parsed p = parse_value(spec, spec.name, spec.fallback);
    entries_[index_of(spec)] = {std::move(p.text), p.number, p.integer, p.bytes, false};
  }
}

Values Values::Read(const Lookup& lookup) {
  Values values;
  for (const Spec& spec : kTable) {
    const auto found = look_up(spec, lookup);
    if (!found) continue;
    Parsed p = parse_value(spec, found->first, found->second);
    values.entries_[index_of(spec)] = {std::move(p.text), p.number, p.integer, p.bytes, true};
  }
  check_relations(values);
  return values;
}

void Values::set(std::string_view name, const std::string& text) {
  const Spec& spec = spec_named(name);
  Parsed p = parse_value(spec, spec.name, text);
  entries_[index_of(spec)] = {std::move(p.text), p.number, p.integer, p.bytes, true};
}

const Values::Entry& Values::entry(const Spec& spec, Kind a, Kind b) const {
  KOLO_CHECK_MSG(spec.kind == a || spec.kind == b, "{} is a {} setting, read as a {}", spec.name,
                 kind_name(spec.kind), kind_name(a));
  return entries_[index_of(spec)];
}

bool Values::boolean(Name name) const {
  return entry(name.spec(), Kind::kBool, Kind::kBool).integer != 0;
}

int64_t Values::integer(Name name) const {
  return entry(name.spec(), Kind::kInt, Kind::kInt).integer;
}

uint64_t Values::bytes(Name name) const {
  return entry(name.spec(), Kind::kSize, Kind::kSize).bytes;
}

std::pair<double, int64_t> Values::seconds_or_millis(const Spec& spec) const {
  const double number = entry(spec, Kind::kSeconds, Kind::kMillis).number;
  return {number, spec.kind == Kind::kMillis ? 1000 : 1};
}

double Values::number(Name name) const {
  return entry(name.spec(), Kind::kNumber, Kind::kNumber).number;
}

const std::string& Values::text(Name name) const {
  const Spec& spec = name.spec();
  if (spec.kind == Kind::kChoice) return entry(spec, Kind::kChoice, Kind::kChoice).text;
  return entry(spec, Kind::kString, Kind::kName).text;
}

bool Values::is_set(Name name) const {
  return entries_[index_of(name.spec())].set;
}

std::string Values::Describe() const {
  std::string out;
  std::string_view section;
  for (const Spec& spec : kTable) {
    if (spec.section != section) {
      section = spec.section;
      out += fmt::format("{}  [{}]", out.empty() ? "" : "\n", section);
    }
    const Entry& e = entries_[index_of(spec)];
    const std::string shown = spec.secret                  ? (e.set ? "(set)" : "(unset)")
                              : spec.kind == Kind::kString ? "'" + e.text + "'"
                              : e.text.empty()             ? "(unset)"
                                                           : e.text;
    out += fmt::format(" {}={}", spec.name, shown);
  }
  return out;
}

std::string read_one(Name name, const Lookup& lookup) {
  return read_one_named(name.spec().name, lookup);
}

std::string read_one_named(std::string_view name, const Lookup& lookup) {
  const Spec& spec = spec_named(name);
  const auto found = look_up(spec, lookup);
  if (!found) return spec.fallback.empty() ? "" : parse_value(spec, spec.name, spec.fallback).text;
  return parse_value(spec, found->first, found->second).text;
}

void check_relations(const Values& values) {
  using std::chrono::milliseconds;
  const auto warning = values.duration<milliseconds>("KOLO_STALL_CHECK_TIME_SECONDS");
  const auto shutdown = values.duration<milliseconds>("KOLO_STALL_SHUTDOWN_TIME_SECONDS");
  if (shutdown.count() > 0 && shutdown < warning)
    throw InvalidArgument(fmt::format(
        "KOLO_STALL_SHUTDOWN_TIME_SECONDS ({} s) must be 0 or at least "
        "KOLO_STALL_CHECK_TIME_SECONDS ({} s)",
        format_number(shutdown.count() / 1000.0), format_number(warning.count() / 1000.0)));
}

}  // namespace kolo::settings
