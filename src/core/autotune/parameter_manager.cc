#include "core/autotune/parameter_manager.h"

#include <algorithm>

#include "common/logging.h"

namespace kolo::core::autotune {
namespace {

// Measurements per sample; the sample's score is their median (Horovod's
// five).
constexpr size_t kRatesPerSample = 5;

// Horovod's search box and starting points, (fusion MiB, cycle ms).
constexpr double kFusionMbRange[2] = {0, 64};
constexpr double kCycleMsRange[2] = {1, 100};
constexpr double kStartingPoints[][2] = {{4, 5}, {32, 50}, {16, 25}, {8, 10}};

}  // namespace

ParameterManager::ParameterManager(AutotuneOptions options, Clock::time_point now)
    : options_(std::move(options)),
      log_(options_.log_path),
      warmup_left_(std::max(0, options_.warmup_samples)),
      current_(options_.initial),
      best_(options_.initial),
      measured_since_(now) {
  std::vector<std::pair<double, double>> bounds;
  if (options_.tune_fusion_threshold) {
    joint_.push_back(&TunedParams::fusion_threshold_mb);
    bounds.emplace_back(kFusionMbRange[0], kFusionMbRange[1]);
  }
  if (options_.tune_cycle_time) {
    joint_.push_back(&TunedParams::cycle_time_ms);
    bounds.emplace_back(kCycleMsRange[0], kCycleMsRange[1]);
  }
  if (options_.tune_cache) switches_.push_back(&TunedParams::cache_enabled);
  if (options_.tune_hierarchical_allreduce)
    switches_.push_back(&TunedParams::hierarchical_allreduce);
  if (options_.tune_hierarchical_allgather)
    switches_.push_back(&TunedParams::hierarchical_allgather);

  current_.active = true;
  if (!joint_.empty() && options_.max_samples > 0) {
    optimizer_.emplace(bounds, options_.noise);
    set_joint(current_, Eigen::Map<const Eigen::Vector2d>(kStartingPoints[0]));
  } else {
    phase_ = Phase::kSwitches;
    if (switches_.empty()) finish();
  }
  // Until the first switch, the engine runs with what the job set; the
  // first sample is measured with the settings the tuner starts from.
  waiting_for_apply_ = true;
  KOLO_LOG_INFO("autotune: tuning {} continuous and {} on/off settings; starting with {}",
                joint_.size(), switches_.size(), describe(current_));
}

Eigen::VectorXd ParameterManager::joint_point(const TunedParams& p) const {
  Eigen::VectorXd point(static_cast<Eigen::Index>(joint_.size()));
  for (size_t i = 0; i < joint_.size(); ++i) point(static_cast<Eigen::Index>(i)) = p.*joint_[i];
  return point;
}

void ParameterManager::set_joint(TunedParams& p, const Eigen::VectorXd& point) const {
  // `point` may hold both coordinates of a starting point while only one
  // setting is tuned: take the one that belongs to each tuned setting.
  const bool full = point.size() == 2 && joint_.size() < 2;
  for (size_t i = 0; i < joint_.size(); ++i) {
    Eigen::Index from = static_cast<Eigen::Index>(i);
    if (full) from = joint_[i] == &TunedParams::fusion_threshold_mb ? 0 : 1;
    p.*joint_[i] = point(from);
  }
}

std::optional<TunedParams> ParameterManager::record(const std::vector<std::string>& names,
                                                    uint64_t bytes, Clock::time_point now) {
  if (!current_.active || waiting_for_apply_) return std::nullopt;
  bytes_ += bytes;
  const int limit = static_cast<int>(rates_.size() + 1) * std::max(1, options_.steps_per_sample);
  const bool measurement_done = std::any_of(
      names.begin(), names.end(), [&](const auto& name) { return ++tensor_runs_[name] >= limit; });
  if (!measurement_done) return std::nullopt;
  const double micros = std::max(
      1.0,
      static_cast<double>(
          std::chrono::duration_cast<std::chrono::microseconds>(now - measured_since_).count()));
  rates_.push_back(static_cast<double>(bytes_) / micros);
  bytes_ = 0;
  measured_since_ = now;
  if (rates_.size() < kRatesPerSample) return std::nullopt;
  std::sort(rates_.begin(), rates_.end());
  const double score = rates_[rates_.size() / 2];
  rates_.clear();
  tensor_runs_.clear();
  auto next = score_sample(score);
  if (next) waiting_for_apply_ = true;
  return next;
}

void ParameterManager::applied(Clock::time_point now) {
  waiting_for_apply_ = false;
  rates_.clear();
  tensor_runs_.clear();
  bytes_ = 0;
  measured_since_ = now;
}

std::optional<TunedParams> ParameterManager::score_sample(double score) {
  if (!current_.active) return std::nullopt;
  if (warmup_left_ > 0) {
    --warmup_left_;
    KOLO_LOG_INFO("autotune: warming up ({} samples left), score {:.4g}", warmup_left_, score);
    return std::nullopt;
  }
  log_.row(current_, score);
  KOLO_LOG_INFO("autotune: {}: score {:.4g} bytes/us", describe(current_), score);
  if (score > best_score_) {
    best_score_ = score;
    best_ = current_;
  }
  if (phase_ == Phase::kBayesian) {
    optimizer_->add_sample(joint_point(current_), score);
    ++bayesian_scored_;
    next_bayesian();
  } else if (phase_ == Phase::kSwitches) {
    next_switch();
  }
  return current_;
}

void ParameterManager::next_bayesian() {
  if (bayesian_scored_ >= options_.max_samples) {
    phase_ = Phase::kSwitches;
    current_ = best_;
    current_.active = true;
    next_switch();
    return;
  }
  const size_t starting = sizeof(kStartingPoints) / sizeof(kStartingPoints[0]);
  if (static_cast<size_t>(bayesian_scored_) < starting) {
    set_joint(current_, Eigen::Map<const Eigen::Vector2d>(kStartingPoints[bayesian_scored_]));
  } else {
    set_joint(current_, optimizer_->next_sample());
  }
}

void ParameterManager::next_switch() {
  if (next_switch_ >= switches_.size()) {
    finish();
    return;
  }
  // Try the best settings so far with this one switch flipped.
  current_ = best_;
  current_.active = true;
  bool TunedParams::*flag = switches_[next_switch_++];
  current_.*flag = !(best_.*flag);
}

void ParameterManager::finish() {
  phase_ = Phase::kDone;
  if (best_score_ >= 0) {
    current_ = best_;
    log_.row(best_, best_score_);
  }
  current_.active = false;
  KOLO_LOG_INFO("autotune: done; keeping {} (score {:.4g} bytes/us)", describe(current_),
                best_score_);
}

}  // namespace kolo::core::autotune
