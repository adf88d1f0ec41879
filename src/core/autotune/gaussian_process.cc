#include "core/autotune/gaussian_process.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "common/error.h"

namespace kolo::core::autotune {
namespace {

// Length scales tried, in units of the normalized box: from features a
// tenth of a range wide to an almost linear trend.
constexpr double kLengthScales[] = {0.08, 0.12, 0.18, 0.25, 0.35, 0.5, 0.7, 1.0};
// Added to the diagonal even with noise 0, so nearly equal points still
// give a positive definite kernel.
constexpr double kJitter = 1e-8;

}  // namespace

GaussianProcess::GaussianProcess(double noise) : noise_(noise) {
  if (!(noise >= 0) || !std::isfinite(noise))
    throw InvalidArgument(fmt::format("Gaussian process noise {} must be 0 or more", noise));
}

double GaussianProcess::kernel(const Eigen::VectorXd& a, const Eigen::VectorXd& b) const {
  const double d2 = (a - b).squaredNorm();
  return std::exp(-0.5 * d2 / (length_scale_ * length_scale_));
}

double GaussianProcess::fit_with(double length_scale) {
  length_scale_ = length_scale;
  const Eigen::Index n = points_.rows();
  Eigen::MatrixXd k(n, n);
  for (Eigen::Index i = 0; i < n; ++i)
    for (Eigen::Index j = 0; j <= i; ++j)
      k(i, j) = k(j, i) = kernel(points_.row(i).transpose(), points_.row(j).transpose());
  k.diagonal().array() += noise_ + kJitter;
  cholesky_.compute(k);
  if (cholesky_.info() != Eigen::Success) return -std::numeric_limits<double>::infinity();
  alpha_ = cholesky_.solve(standardized_);
  const Eigen::MatrixXd l = cholesky_.matrixL();
  const double log_det = 2 * l.diagonal().array().log().sum();
  return -0.5 * standardized_.dot(alpha_) - 0.5 * log_det -
         0.5 * static_cast<double>(n) * std::log(2 * M_PI);
}

void GaussianProcess::fit(const Eigen::MatrixXd& points, const Eigen::VectorXd& scores) {
  if (points.rows() == 0 || points.rows() != scores.size())
    throw InvalidArgument(
        fmt::format("a Gaussian process needs one score per point ({} points, {} "
                    "scores)",
                    points.rows(), scores.size()));
  points_ = points;
  y_mean_ = scores.mean();
  const double variance =
      scores.size() > 1 ? (scores.array() - y_mean_).square().sum() / (scores.size() - 1) : 0;
  y_scale_ = variance > 0 ? std::sqrt(variance) : 1;
  standardized_ = (scores.array() - y_mean_) / y_scale_;

  double best = -std::numeric_limits<double>::infinity();
  double best_scale = kLengthScales[0];
  for (double scale : kLengthScales) {
    const double likelihood = fit_with(scale);
    if (likelihood > best) {
      best = likelihood;
      best_scale = scale;
    }
  }
  log_likelihood_ = fit_with(best_scale);
}

Prediction GaussianProcess::predict(const Eigen::VectorXd& point) const {
  const Eigen::Index n = points_.rows();
  Eigen::VectorXd k_star(n);
  for (Eigen::Index i = 0; i < n; ++i) k_star(i) = kernel(point, points_.row(i).transpose());
  const double mean = k_star.dot(alpha_);
  const Eigen::VectorXd v = cholesky_.matrixL().solve(k_star);
  const double variance = std::max(0.0, 1.0 - v.squaredNorm());
  return {y_mean_ + mean * y_scale_, std::sqrt(variance) * y_scale_};
}

}  // namespace kolo::core::autotune
