// What this installation can do with MPI, for Horovod's mpi_built() and
// mpi_threads_supported(). Kolo's MPI backend is a plugin (libkolo_mpi.so)
// loaded at run time, so the answers depend on the machine, not the build
// alone: a plugin that was not built, or whose libmpi is missing, is "no".
#pragma once

#include <string>

namespace kolo {

// Whether the MPI backend can run here; `why_not` gets the reason when not.
bool mpi_available(std::string* why_not = nullptr);

// 1 when MPI gives MPI_THREAD_MULTIPLE, 0 when it gives less, -1 while MPI is
// not initialised (or the plugin is not available).
int mpi_threads_supported();

}  // namespace kolo
