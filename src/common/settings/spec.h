// What one setting is: its names, type, range, default and meaning, and how
// kolorun's flags and --config-file spell it. Every setting is one Spec in
// settings/table.h; parsing, Config::Describe(), kolorun's flags and their
// checks, and docs/config.md are all derived from that table.
#pragma once

#include <cstdint>
#include <limits>
#include <string_view>

namespace kolo::settings {

enum class Kind {
  kBool,     // 1/0, true/false, yes/no, on/off (any case)
  kInt,      // a whole number within the range
  kSize,     // bytes: 4096, 256K, 64M, 1.5G (powers of 1024)
  kSeconds,  // a number of seconds, fractions allowed
  kMillis,   // a number of milliseconds, fractions allowed
  kNumber,   // a plain number, fractions allowed (a noise level)
  kString,   // free text (a path, a host, an interface)
  kName,     // letters, digits, '_' and '-', at most `range.max` characters
  kChoice,   // one of `choices` (any case)
};

// Bounds of a number (for kSize in bytes, for kName the longest length).
// An open bound excludes its value: seconds "above 0" is {0, max, true}.
struct Range {
  double min = -std::numeric_limits<double>::infinity();
  double max = std::numeric_limits<double>::infinity();
  bool min_open = false;
};

// How kolorun takes the setting: a flag and its key in horovodrun's YAML
// --config-file. The flag's value times `scale` is the setting's value
// (MiB to bytes), so one range check serves both.
struct FlagSpec {
  enum class Form {
    kNone,         // no flag
    kValue,        // --flag VALUE
    kSwitch,       // --flag alone sets `switch_value`; the file's key takes a boolean
    kFirstOfList,  // --flag a,b,c sets a (horovodrun's --network-interfaces)
  };
  Form form = Form::kNone;
  std::string_view names;       // "--cycle-time-ms"; several separated by ','
  std::string_view value_name;  // shown in --help: "MS", "SECONDS", "MiB"
  double scale = 1;             // flag value x scale = setting value
  std::string_view config_key;  // "params.cycle_time_ms"; empty: not in the file
  // kSwitch: the setting's value the flag sets; the file's key gives a
  // boolean that sets it (true) or its opposite (false). `inverted` flips
  // that for keys that say the opposite of the variable
  // (stall_check.enabled vs KOLO_STALL_CHECK_DISABLE).
  std::string_view switch_value = "1";
  bool inverted = false;
  // kSwitch: horovodrun's spellings that set the opposite value
  // ("--no-hierarchical-allreduce"); giving both is an error, as argparse's
  // mutually exclusive groups make it.
  std::string_view off_names;
  // kSwitch: a second key whose true means the opposite of `config_key`'s
  // (logging.with_timestamp beside logging.hide_timestamp).
  std::string_view off_config_key;
};

struct Spec {
  std::string_view name;   // KOLO_...
  std::string_view alias;  // HOROVOD_... (empty: none); KOLO_ wins when both are set
  Kind kind = Kind::kString;
  // The value when unset, in the setting's own syntax; empty: unset has a
  // meaning of its own, given in `default_doc`.
  std::string_view fallback;
  Range range;
  // kChoice: '|' between choices, ',' between spellings of one choice; the
  // first spelling is the value ("auto|1,on,true|0,off,false").
  std::string_view choices;
  std::string_view section;      // docs/config.md heading the setting is listed under
  std::string_view description;  // one line, for docs and --help
  FlagSpec flag;
  std::string_view default_doc;  // docs' default where `fallback` alone misleads
  bool secret = false;           // Describe() shows only whether it is set
};

}  // namespace kolo::settings
