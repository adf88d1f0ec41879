// kolorun's command line: horovodrun's flag names (-np, -H, --hostfile,
// -p, -i, --fusion-threshold-mb, ...), parsed with CLI11. Returns what to
// do instead of exiting, so tests can check every error and its exit code.
#pragma once

#include <string>
#include <vector>

#include "runner/launch_options.h"

namespace kolo::runner {

struct CliResult {
  enum class Action { kLaunch, kCheckBuild, kExit } action = Action::kExit;
  LaunchOptions options;              // kLaunch
  int exit_code = 0;                  // kExit: 0 after --help/--version, 2 for bad input
  std::string output;                 // kExit: text for stdout (help, version)
  std::string error;                  // kExit: the message for stderr
  std::vector<std::string> warnings;  // for stderr in every case
};

// `args` excludes argv[0]. `env` is the launcher's environment, for -x VAR.
// Everything from the first argument that is not an option (or after "--")
// is the command, untouched.
CliResult parse_command_line(const std::vector<std::string>& args, const Environment& env);

}  // namespace kolo::runner
