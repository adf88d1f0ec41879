// MpiRuntime: the little of MPI a Kolo (TCP) world needs to bootstrap under
// mpirun without a launcher-provided rendezvous store: initialise MPI, learn
// MPI_COMM_WORLD's rank and size, and broadcast rank 0's store address and
// secret to everyone. It goes through the MPI plugin (libkolo_mpi.so, loaded
// at run time), so code using it links no MPI.
//
//   std::string why_not;
//   if (auto mpi = backends::load_mpi_runtime(&why_not)) {
//     std::string address = mpi->rank() == 0 ? my_store_address : "";
//     mpi->broadcast_from_rank0(address, timeout, "why");  // collective
//   } else { /* MPI is not available here: why_not says why */ }
//
// MPI is initialised (MPI_THREAD_MULTIPLE asked for) by load_mpi_runtime unless
// something did already; Kolo then finalises it at process exit, never at
// engine shutdown. Every call is on the caller's thread.
#pragma once

#include <chrono>
#include <optional>
#include <string>

namespace kolo::backends {

class MpiPlugin;

class MpiRuntime {
 public:
  explicit MpiRuntime(MpiPlugin& plugin);

  // MPI_COMM_WORLD's rank and size.
  int rank() const { return rank_; }
  int size() const { return size_; }
  // Whether MPI gave MPI_THREAD_MULTIPLE.
  bool thread_multiple() const { return thread_multiple_; }
  // `data` on MPI_COMM_WORLD's rank 0 replaces `data` on every rank. A
  // collective: every rank of MPI_COMM_WORLD calls it. Throws IoError when MPI
  // fails. Not done within `timeout`: logs `why_it_failed` and ends the
  // whole job (MPI_Abort), since MPI cannot cancel a pending broadcast.
  void broadcast_from_rank0(std::string& data, std::chrono::milliseconds timeout,
                            const std::string& why_it_failed);

 private:
  MpiPlugin* plugin_;
  int rank_ = 0;
  int size_ = 1;
  bool thread_multiple_ = false;
};

// Loads the plugin and initialises MPI; no value (and the reason in *why_not)
// where the plugin is not built or does not load (libmpi missing). Throws
// IoError when MPI itself fails to initialise.
std::optional<MpiRuntime> load_mpi_runtime(std::string* why_not);

}  // namespace kolo::backends
