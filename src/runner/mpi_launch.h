// kolorun --mpi: the ranks are started by the system's mpirun (OpenMPI's
// command line) instead of kolorun's fork/exec and ssh. kolorun still hosts
// the rendezvous store; mpirun hands its address and secret to every rank
// with -x, and each rank takes its rank and size from OpenMPI's
// OMPI_COMM_WORLD_* variables (mpirun cannot give each rank its own
// KOLO_RANK). kolorun waits for mpirun, forwards SIGINT/SIGTERM to it,
// keeps the store up until it ends and exits with its exit code.
#pragma once

#include <string>
#include <vector>

#include "runner/job.h"
#include "runner/launch_options.h"
#include "runner/rank_env.h"

namespace kolo::runner {

// The variables every rank gets from kolorun through mpirun: the launcher's
// environment with the settings, -x variables and the rendezvous on top, and
// no rank layout of kolorun's own (each rank has its own under mpirun).
Environment mpirun_environment(const Environment& launcher_env, const LaunchOptions& options,
                               const RendezvousEndpoint& rendezvous);

// The names mpirun passes on with -x (by name, so the secret never shows in
// the process list): the settings, -x variables, the rendezvous, and PATH,
// LD_LIBRARY_PATH and PYTHONPATH where the launcher has them.
std::vector<std::string> mpirun_exported_names(const Environment& launcher_env,
                                               const LaunchOptions& options);

// mpirun's whole command line. `as_root`: kolorun runs as root, where
// OpenMPI refuses to start without --allow-run-as-root.
std::vector<std::string> mpirun_command(const LaunchOptions& options,
                                        const std::vector<std::string>& exported, bool as_root);

// Runs the job through mpirun. Throws InvalidArgument for input that cannot
// be launched (as launch() does).
JobResult launch_with_mpirun(const LaunchOptions& options, int stdout_fd, int stderr_fd);

}  // namespace kolo::runner
