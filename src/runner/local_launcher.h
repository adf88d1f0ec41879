// Starts N ranks of a command on this host, each with the KOLO_* (and
// HOROVOD_*) rank variables and the address and secret of a rendezvous store
// hosted here, then waits for them. The seed of kolorun's local spawning;
// kolo-bench -np and kolo-demo use it to run without a separate launcher.
#pragma once

#include <chrono>
#include <map>
#include <string>
#include <vector>

namespace kolo::runner {

struct LocalLaunchOptions {
  int np = 2;
  std::vector<std::string> argv;  // argv[0] is the program (a path or a name in PATH)
  std::map<std::string, std::string> extra_env;
  // When one rank fails, the others get SIGTERM, and SIGKILL after this.
  std::chrono::milliseconds kill_grace{std::chrono::seconds(3)};
  // Whole-job limit; 0 = none. Ranks still running at the limit are killed.
  std::chrono::milliseconds job_timeout{0};
};

struct RankExit {
  int rank = 0;
  int pid = 0;
  int exit_code = 0;  // valid when signal == 0
  int signal = 0;     // non-zero when the rank was killed by a signal
  bool ok() const { return signal == 0 && exit_code == 0; }
  std::string describe() const;  // "rank 1 (pid 123) exited with code 3"
};

struct LaunchResult {
  std::vector<RankExit> ranks;
  // The first rank to fail, in time order (-1 when all succeeded); the
  // others' failures usually follow from it.
  int first_failure = -1;
  bool timed_out = false;
  int exit_code() const;  // 0 when all succeeded, else 1
};

// Throws InvalidArgument for a bad np/argv and IoError if a process cannot
// be started.
LaunchResult launch_local(const LocalLaunchOptions& options);

}  // namespace kolo::runner
