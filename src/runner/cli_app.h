// kolorun's flags as CLI11 options: every horovodrun 0.28.1 flag, Kolo's
// own ssh options and the engine settings of the settings table. Values
// land in RawFlags; runner/cli.cc turns them into LaunchOptions.
#pragma once

#include <CLI/CLI.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/horovod_only.h"
#include "runner/launch_options.h"
#include "runner/setting_flags.h"

namespace kolo::runner {

// Values of every flag, before they become LaunchOptions; optionals are
// read through CLI11's count() so "not given" differs from any value.
struct RawFlags {
  int np = 0;
  std::string hosts, hostfile, config_file, output_dir;
  std::vector<std::string> exports;
  int ssh_port = 22;
  bool verbose = false, timestamps = false, check_build = false;
  SettingFlags settings;  // the engine-setting flags, from the settings table
  // Which launcher starts the ranks (horovodrun's "controller").
  bool use_gloo = false, use_mpi = false, use_jsrun = false;
  std::string mpi_args, binding_args;
  bool disable_cache = false, tcp = false;  // accepted; no effect in Kolo (see cli_app.cc)
  HorovodOnlyRequests horovod_only;         // features Kolo does not have (horovod_only.h)
  // Elastic mode.
  int min_np = 0, max_np = 0, slots_per_host = 1, elastic_timeout = 600, reset_limit = 0;
  std::string discovery_script;
  std::pair<double, double> cooldown{0, 0};
};

// The flags that turn elastic mode on (as horovodrun decides it), and those
// that mean something only there (horovodrun ignores them otherwise).
inline constexpr const char* kElasticSwitches[] = {"--min-np", "--host-discovery-script"};
inline constexpr const char* kElasticOnly[] = {"--max-np", "--slots-per-host", "--elastic-timeout",
                                               "--reset-limit", "--blacklist-cooldown-range"};

void build_app(CLI::App& app, RawFlags& f, SshOptions& ssh);

}  // namespace kolo::runner
