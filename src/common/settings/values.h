// The parsed value of every setting, read once from the environment (or any
// other source of name=value pairs) and checked against settings/table.h.
// Layers read what they use by name:
//
//   const auto& v = config.settings;
//   size_t slot = v.bytes("KOLO_SHM_SLOT_BYTES");
//
// The name is checked when the code compiles (an unknown name fails the
// build), the kind when it runs (a size read as a bool is a CHECK failure,
// caught by the first test that reads it).
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/settings/table.h"

namespace kolo::settings {

// A setting's name, checked against the table when the code compiles.
class Name {
 public:
  // NOLINTNEXTLINE(google-explicit-constructor): written as a plain literal
  consteval Name(const char* name) : index_(index_of_setting(name)) {
    if (index_ == kSettingCount) throw "not a setting in settings/table.h";
  }
  const Spec& spec() const { return kTable[index_]; }

 private:
  size_t index_;
};

// Where values come from: the value of a variable, or nullopt when unset.
using Lookup = std::function<std::optional<std::string>(std::string_view name)>;
// The process environment; an empty variable counts as unset.
std::optional<std::string> from_environment(std::string_view name);

class Values {
 public:
  // Every setting at its default.
  Values();
  // Reads every setting through `lookup` (KOLO_ name first, then the
  // HOROVOD_ alias) and checks each value and the rules between them.
  // Throws InvalidArgument naming the variable as set and the rule it breaks.
  static Values Read(const Lookup& lookup = from_environment);

  bool boolean(Name name) const;
  int64_t integer(Name name) const;
  uint64_t bytes(Name name) const;
  // A kSeconds or kMillis setting in `D`, truncated (1.5 ms is 1 ms).
  template <typename D>
  D duration(Name name) const {
    const auto [number, unit_den] = seconds_or_millis(name.spec());
    // One multiplication by an exact factor: 2.5 ms is 2500 us, not 2499.
    const double factor = static_cast<double>(D::period::den) /
                          (static_cast<double>(unit_den) * static_cast<double>(D::period::num));
    return D(static_cast<typename D::rep>(number * factor));
  }
  // A kNumber setting.
  double number(Name name) const;
  // kString, kName and kChoice (the choice's first spelling).
  const std::string& text(Name name) const;
  // Whether the variable (or its alias) was set; defaults count as unset.
  bool is_set(Name name) const;

  // Sets a value as if it came from the environment, checked the same way
  // (tests and tools). Throws InvalidArgument.
  void set(std::string_view name, const std::string& text);

  // "KOLO_X=value" for every setting, one section per line (secrets show
  // only whether they are set), for debug logs.
  std::string Describe() const;

 private:
  struct Entry {
    std::string text;  // canonical text (a choice's first spelling, sizes in bytes)
    double number = 0;
    int64_t integer = 0;
    uint64_t bytes = 0;
    bool set = false;
  };
  const Entry& entry(const Spec& spec, Kind expected_a, Kind expected_b) const;
  // The number as set and its unit's denominator (1: seconds, 1000: ms).
  std::pair<double, int64_t> seconds_or_millis(const Spec& spec) const;
  std::vector<Entry> entries_;  // in table order
};

// One setting read on its own, for code that runs before or without a Config
// (the log threshold, the SIMD level): its canonical text (the default when
// unset). Throws InvalidArgument as Values::Read does.
std::string read_one(Name name, const Lookup& lookup = from_environment);
// The same for a name known only at run time (the Python binding); an
// unknown name is an InvalidArgument.
std::string read_one_named(std::string_view name, const Lookup& lookup = from_environment);

// Checks the rules between settings that no single value shows (the stall
// shutdown time against the warning time). Values::Read calls it; kolorun
// calls it on what its flags give the ranks.
void check_relations(const Values& values);

}  // namespace kolo::settings
