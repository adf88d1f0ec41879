#include "runner/horovod_only.h"

#include <fmt/format.h>

#include "common/error.h"

namespace kolo::runner {
namespace {

template <typename T>
void take(std::optional<T>& mine, const std::optional<T>& later) {
  if (later) mine = later;
}

void non_negative(const std::optional<int>& value, const char* flag) {
  if (value && *value < 0)
    throw InvalidArgument(fmt::format("{} {}: must be 0 or more", flag, *value));
}

}  // namespace

void HorovodOnlyRequests::overlay(const HorovodOnlyRequests& later) {
  take(torus_allreduce, later.torus_allreduce);
  take(num_nccl_streams, later.num_nccl_streams);
  take(thread_affinity, later.thread_affinity);
  take(mpi_threads_disable, later.mpi_threads_disable);
}

std::vector<std::string> check_horovod_only(const HorovodOnlyRequests& r) {
  non_negative(r.num_nccl_streams, "--num-nccl-streams");
  non_negative(r.thread_affinity, "--thread-affinity");

  std::vector<std::string> warnings;
  if (r.torus_allreduce.value_or(false))
    warnings.push_back(
        "--torus-allreduce: Kolo has no torus allreduce; across hosts it reduces "
        "hierarchically or over a ring (--hierarchical-allreduce)");
  if (r.num_nccl_streams && *r.num_nccl_streams > 1)
    warnings.push_back(fmt::format(
        "--num-nccl-streams {}: Kolo has no NCCL backend, so there are no NCCL streams; the "
        "setting has no effect",
        *r.num_nccl_streams));
  if (r.thread_affinity)
    warnings.push_back(
        fmt::format("--thread-affinity {}: Kolo does not pin its background thread to a core; the "
                    "setting has no effect",
                    *r.thread_affinity));
  return warnings;
}

}  // namespace kolo::runner
