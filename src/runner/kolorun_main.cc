// kolorun: the launcher. `kolorun -np 4 -H a:2,b:2 python train.py`.
// Exit codes: 0 success; 1 a rank failed (the last line says which, where
// and how) or the job timed out; 2 bad command line or input; 128+N after
// signal N (130 for Ctrl-C).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "common/error.h"
#include "runner/check_build.h"
#include "runner/cli.h"
#include "runner/launcher.h"
#include "runner/rank_supervisor.h"
#include "runner/remote_exec.h"

int main(int argc, char** argv) {
  using namespace kolo;
  using namespace kolo::runner;
  // The remote side of an ssh-launched rank (see remote_exec.h).
  if (argc == 2 && std::string(argv[1]) == kRemoteHelperFlag)
    return run_remote_helper(STDIN_FILENO);
  // Between kolorun and each local rank (see rank_supervisor.h).
  if (argc >= 2 && std::string(argv[1]) == kRankSupervisorFlag)
    return run_rank_supervisor(std::vector<std::string>(argv + 2, argv + argc));

  CliResult cli =
      parse_command_line(std::vector<std::string>(argv + 1, argv + argc), current_environment());
  for (const auto& w : cli.warnings) fmt::print(stderr, "kolorun: warning: {}\n", w);
  switch (cli.action) {
    case CliResult::Action::kExit:
      std::fputs(cli.output.c_str(), stdout);
      std::fputs(cli.error.c_str(), stderr);
      return cli.exit_code;
    case CliResult::Action::kCheckBuild:
      std::fputs(check_build_report().c_str(), stdout);
      return 0;
    case CliResult::Action::kLaunch:
      break;
  }
  cli.options.supervise_ranks = true;
  try {
    JobResult result = launch(cli.options);
    if (!result.message.empty()) fmt::print(stderr, "kolorun: {}\n", result.message);
    return result.exit_code;
  } catch (const InvalidArgument& e) {
    fmt::print(stderr, "kolorun: {}\n", e.what());
    return 2;
  } catch (const Error& e) {
    fmt::print(stderr, "kolorun: {}\n", e.status().ToString());
    return 1;
  }
}
