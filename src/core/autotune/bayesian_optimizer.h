// Bayesian optimization over a box of continuous parameters (the fusion
// threshold and the cycle time): a Gaussian process fitted to the scores
// seen so far, and the next point where the expected improvement over the
// best score is largest. Points are given and returned in the parameters'
// own units; the process works in the box normalized to [0, 1]^d, so a
// range of 0-64 MB and one of 1-100 ms weigh alike.
//
// Deterministic: the candidates come from a fixed-seed generator, so the
// same scores give the same proposals (tests, and reproducible tuning logs).
// Used by one thread (the coordinator's background thread).
#pragma once

#include <Eigen/Dense>
#include <random>
#include <utility>
#include <vector>

#include "core/autotune/gaussian_process.h"

namespace kolo::core::autotune {

// The expected improvement of a prediction over `best` (maximizing), with
// exploration margin `xi`: E[max(0, f - best - xi)] for f ~ N(mean, sd^2).
double expected_improvement(const Prediction& p, double best, double xi);

class BayesianOptimizer {
 public:
  // `bounds`: [low, high] of each parameter (low < high).
  BayesianOptimizer(std::vector<std::pair<double, double>> bounds, double noise);

  void add_sample(const Eigen::VectorXd& point, double score);
  // The point to measure next (the middle of the box before any sample).
  Eigen::VectorXd next_sample();
  // The sampled point with the highest score so far.
  const Eigen::VectorXd& best_point() const { return best_point_; }
  double best_score() const { return best_score_; }
  size_t samples() const { return scores_.size(); }

  Eigen::VectorXd normalize(const Eigen::VectorXd& point) const;
  Eigen::VectorXd denormalize(const Eigen::VectorXd& unit) const;

 private:
  double acquisition(const GaussianProcess& gp, const Eigen::VectorXd& unit) const;
  Eigen::VectorXd refine(const GaussianProcess& gp, Eigen::VectorXd unit) const;

  std::vector<std::pair<double, double>> bounds_;
  double noise_;
  std::vector<Eigen::VectorXd> points_;  // normalized
  std::vector<double> scores_;
  Eigen::VectorXd best_point_;
  double best_score_ = 0;
  double incumbent_ = 0;  // the best score, during next_sample
  double xi_ = 0;         // the exploration margin, during next_sample
  std::mt19937_64 random_{0x6b6f6c6f};
};

}  // namespace kolo::core::autotune
