#include "core/autotune/tuning_log.h"

#include <fmt/format.h>

#include "common/errno_text.h"
#include "common/logging.h"

namespace kolo::core::autotune {

TuningLog::TuningLog(const std::string& path) {
  if (path.empty()) return;
  file_.open(path, std::ios::out | std::ios::trunc);
  if (!file_) {
    KOLO_LOG_WARNING("autotune: cannot write the log file '{}': {}; tuning goes on without it",
                     path, errno_text(errno));
    return;
  }
  file_ << "hierarchical_allreduce,hierarchical_allgather,torus_allreduce,cache_enabled,"
           "cycle_time_ms,tensor_fusion_threshold,score\n"
        << std::flush;
}

void TuningLog::row(const TunedParams& p, double score) {
  if (!file_.is_open()) return;
  file_ << fmt::format("{},{},0,{},{:g},{:g},{:g}\n", p.hierarchical_allreduce ? 1 : 0,
                       p.hierarchical_allgather ? 1 : 0, p.cache_enabled ? 1 : 0, p.cycle_time_ms,
                       p.fusion_threshold_mb, score)
        << std::flush;
}

}  // namespace kolo::core::autotune
