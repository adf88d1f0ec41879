// horovodrun's options for features Kolo does not have: the torus allreduce, NCCL streams, pinning
// the background thread, and MPI's thread level. kolorun accepts every one of them, from flags or
// from the config file, with horovodrun's range checks. One that asks for nothing
// (--no-torus-allreduce, one NCCL stream) passes
// silently; one that asks for what Kolo cannot do gives one warning naming
// what is missing, and the job runs without it: a tuning request never
// changes results, so refusing it would only stop a job horovodrun starts.
// docs/user-guide.md lists each decision.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace kolo::runner {

struct HorovodOnlyRequests {
  std::optional<bool> torus_allreduce;
  std::optional<int> num_nccl_streams;
  std::optional<int> thread_affinity;
  std::optional<bool> mpi_threads_disable;

  // Each value `later` has replaces this one's (flags over the file).
  void overlay(const HorovodOnlyRequests& later);
};

// horovodrun's checks (counts >= 0): throws
// InvalidArgument naming the flag. Returns the warnings for requests Kolo
// cannot carry out.
std::vector<std::string> check_horovod_only(const HorovodOnlyRequests& requests);

}  // namespace kolo::runner
