// The autotuner's decisions, after Horovod's ParameterManager: it scores the
// engine's throughput under the current settings, and when a sample ends it
// picks the next settings to try, until it has tried enough and keeps the
// best. Only the coordinator (global rank 0) has one; the engine sends what
// it returns to every rank with the next negotiation (see engine.cc).
//
// A sample: the cycles until some tensor has run `steps_per_sample` more
// times, five times over; its score is the median of the five rates (bytes
// the collectives moved per microsecond of wall time, Horovod's score), so
// one slow step does not decide. The first `warmup_samples` samples are
// discarded (caches, buffers and the framework settle). Then:
//   1. Bayesian optimization of the fusion threshold (0-64 MiB) and the cycle
//      time (1-100 ms), Horovod's box: Horovod's four starting points, then
//      the Gaussian process's expected-improvement proposals, until
//      `max_samples` samples have been scored;
//   2. with those at their best, each on/off setting (response cache,
//      hierarchical allreduce and allgather where the job has hosts to be
//      hierarchical across) flipped once, kept if it scored better;
//   3. the best settings seen, for the rest of the job.
// A setting the user fixed (set explicitly) is left out of the search, as
// in Horovod. Horovod's chain returns the joint parameters to their first
// values while it tries the switches; here they stay at their best, so
// every switch is judged where it will be used.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/autotune/bayesian_optimizer.h"
#include "core/autotune/tuned_params.h"
#include "core/autotune/tuning_log.h"

namespace kolo::core::autotune {

struct AutotuneOptions {
  int warmup_samples = 3;
  int steps_per_sample = 10;
  int max_samples = 20;  // Bayesian samples, the starting points included
  double noise = 0.8;    // Gaussian process noise (Horovod's default)
  std::string log_path;  // CSV; empty: none
  TunedParams initial;   // the job's values before tuning
  bool tune_fusion_threshold = true;
  bool tune_cycle_time = true;
  bool tune_cache = true;
  bool tune_hierarchical_allreduce = false;
  bool tune_hierarchical_allgather = false;
};

class ParameterManager {
 public:
  using Clock = std::chrono::steady_clock;

  ParameterManager(AutotuneOptions options, Clock::time_point now);

  // After a cycle of the global process set ran the tensors `names`, which
  // moved `bytes`. Returns the settings every rank must switch to when a
  // sample ended and they change; nothing is measured until the engine
  // reports them applied.
  std::optional<TunedParams> record(const std::vector<std::string>& names, uint64_t bytes,
                                    Clock::time_point now);
  // The settings went into effect on this rank: the next sample starts now.
  void applied(Clock::time_point now);

  // A finished sample's score: logs it and moves the search on. Returns the
  // next settings (also when they equal the last), or nothing during warmup.
  // Public so tests drive the search with known scores, without timing.
  std::optional<TunedParams> score_sample(double score);

  const TunedParams& current() const { return current_; }
  const TunedParams& best() const { return best_; }
  double best_score() const { return best_score_; }
  bool active() const { return current_.active; }

 private:
  enum class Phase { kBayesian, kSwitches, kDone };
  Eigen::VectorXd joint_point(const TunedParams& p) const;
  void set_joint(TunedParams& p, const Eigen::VectorXd& point) const;
  void next_bayesian();
  void next_switch();
  void finish();

  AutotuneOptions options_;
  TuningLog log_;
  std::vector<double TunedParams::*> joint_;   // the tuned continuous settings
  std::vector<bool TunedParams::*> switches_;  // the tuned on/off settings
  std::optional<BayesianOptimizer> optimizer_;
  Phase phase_ = Phase::kBayesian;
  int warmup_left_;
  int bayesian_scored_ = 0;
  size_t next_switch_ = 0;
  TunedParams current_;
  TunedParams best_;
  double best_score_ = -1;

  // The sample being measured.
  bool waiting_for_apply_ = false;
  std::map<std::string, int> tensor_runs_;
  std::vector<double> rates_;
  uint64_t bytes_ = 0;
  Clock::time_point measured_since_;
};

}  // namespace kolo::core::autotune
