// kolorun's flags and --config-file keys for engine settings, made from the
// settings table (common/settings/table.h): a flag added there appears here
// with its help, its unit and the same checks a rank makes. What they give
// is a map of KOLO_ variables for every rank; a flag that is not given sets
// nothing, so the engine's default (or the environment) applies.
#pragma once

#include <CLI/CLI.hpp>
#include <map>
#include <string>
#include <vector>

#include "common/settings/spec.h"
#include "runner/horovod_only.h"
#include "runner/process.h"

namespace kolo::runner {

// Where CLI11 stores the flags' raw values until they are checked.
class SettingFlags {
 public:
  // Adds an option for every setting with a flag, in their own help group.
  void add_to(CLI::App& app);
  // The variables the given flags set, each checked as a rank checks it.
  // Throws InvalidArgument: "--cycle-time-ms 0: KOLO_CYCLE_TIME='0' must be
  // above 0 and at most 10000 milliseconds".
  Environment given(const CLI::App& app) const;

 private:
  std::map<const settings::Spec*, std::string> values_;
  std::map<const settings::Spec*, bool> switches_;
  std::map<const settings::Spec*, bool> off_switches_;  // "--no-..." spellings
};

// horovodrun's YAML config file: what it sets, with flags over it.
struct ConfigFile {
  Environment settings;              // the KOLO_ variables of its setting keys
  HorovodOnlyRequests horovod_only;  // its keys for features Kolo lacks
  std::string controller;            // "gloo", "mpi", or "" when it names none
};

// Reads every key horovodrun's config parser reads: the sections params,
// autotune, timeline, stall_check, library_options and logging, and the
// top-level controller. An unknown section or key, a wrong value, or a file
// that is not YAML is an InvalidArgument naming the file and key.
ConfigFile load_config_file(const std::string& path);
ConfigFile parse_config_text(const std::string& text, const std::string& origin);

// Checks the environment every rank will start with (kolorun's own,
// overlaid with the flags, the file and -x) exactly as Config::FromEnv will,
// so a value the ranks would refuse stops kolorun first, in their words.
void check_rank_settings(const Environment& rank_environment);

}  // namespace kolo::runner
