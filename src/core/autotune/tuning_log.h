// The CSV that --autotune-log-file (KOLO_AUTOTUNE_LOG) names, in Horovod's
// columns, so tools that read Horovod's autotune logs read Kolo's:
//
//   hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,cycle_time_ms,tensor_fusion_threshold,score
//
// one row per scored sample (the values it ran with and its score, in bytes
// per microsecond), and a last row with the best values and their score
// once tuning ends. Booleans are 0/1, the threshold is in MiB; Kolo has no
// torus allreduce, so that column is always 0. Each row is flushed, so the
// file is readable while the job runs. Written by the coordinator (rank 0).
#pragma once

#include <fstream>
#include <string>

#include "core/autotune/tuned_params.h"

namespace kolo::core::autotune {

class TuningLog {
 public:
  // An empty path writes nothing. A file that cannot be opened is a warning
  // (the job runs on, as in Horovod), not an error.
  explicit TuningLog(const std::string& path);
  void row(const TunedParams& params, double score);

 private:
  std::ofstream file_;
};

}  // namespace kolo::core::autotune
