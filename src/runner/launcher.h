// From LaunchOptions to a finished job: lays out the ranks, decides which
// hosts are this machine, hosts the rendezvous store with a fresh secret on
// an address every host can reach, builds each rank's environment and
// process (fork/exec here, ssh elsewhere) and runs the Job.
#pragma once

#include "runner/job.h"
#include "runner/launch_options.h"

namespace kolo::runner {

// Throws InvalidArgument for input that cannot be launched (unknown
// command, no ssh, unknown interface) before anything starts; the caller
// reports it with exit code 2.
// In elastic mode (options.elastic.enabled) the elastic driver runs the job.
JobResult launch(const LaunchOptions& options, int stdout_fd = 1, int stderr_fd = 2);

// The Job settings a launch implies.
JobOptions job_options(const LaunchOptions& options, int stdout_fd, int stderr_fd, int signal_fd);

// Convenience for tools that start their own ranks on this host (kolo-bench
// -np, tests): np ranks of `command`, output passed through untagged.
JobResult launch_local(int np, std::vector<std::string> command,
                       std::chrono::milliseconds job_timeout = {});

}  // namespace kolo::runner
