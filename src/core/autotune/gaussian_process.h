// A Gaussian process regressor for the autotuner's Bayesian optimization:
// given scores measured at points of the normalized parameter box [0, 1]^d,
// it predicts the score (mean and standard deviation) anywhere in the box.
//
// Why these choices: the scores are noisy throughput measurements, a few
// dozen at most, so an exact GP (Cholesky of an n x n kernel, Eigen's LLT)
// costs microseconds. Scores are standardized before fitting, so the noise
// term is relative to their spread and one default fits any workload's
// units (bytes per microsecond vary by orders of magnitude between jobs).
// The kernel is a squared exponential (RBF) whose length scale is picked
// from a fixed list by the marginal likelihood: deterministic, so the
// coordinator's proposals do not depend on a random restart.
#pragma once

#include <Eigen/Dense>

namespace kolo::core::autotune {

struct Prediction {
  double mean = 0;
  double stddev = 0;
};

class GaussianProcess {
 public:
  // `noise`: the variance added to the kernel's diagonal, in units of the
  // standardized scores' variance (Horovod's alpha; 0 interpolates exactly,
  // a small jitter is always added so the Cholesky factor exists).
  explicit GaussianProcess(double noise);

  // Fits the points (one per row, coordinates in [0, 1]) and their scores.
  // Throws InvalidArgument when the shapes disagree or there is no point.
  void fit(const Eigen::MatrixXd& points, const Eigen::VectorXd& scores);
  // The posterior at `point`, in the scores' own units.
  Prediction predict(const Eigen::VectorXd& point) const;

  double length_scale() const { return length_scale_; }
  // The log marginal likelihood of the fit (standardized scores).
  double log_likelihood() const { return log_likelihood_; }

 private:
  double kernel(const Eigen::VectorXd& a, const Eigen::VectorXd& b) const;
  // Fits with one length scale; returns the log marginal likelihood.
  double fit_with(double length_scale);

  double noise_;
  double length_scale_ = 0.3;
  double log_likelihood_ = 0;
  double y_mean_ = 0;
  double y_scale_ = 1;
  Eigen::MatrixXd points_;
  Eigen::VectorXd standardized_;
  Eigen::LLT<Eigen::MatrixXd> cholesky_;
  Eigen::VectorXd alpha_;  // K^-1 y
};

}  // namespace kolo::core::autotune
