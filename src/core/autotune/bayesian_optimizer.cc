#include "core/autotune/bayesian_optimizer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "common/error.h"

namespace kolo::core::autotune {
namespace {

// Random candidates per proposal, then a local search from the best few:
// with two dimensions this covers the box far more densely than the GP's
// length scales need, in well under a millisecond.
constexpr int kCandidates = 2000;
constexpr int kRefined = 5;
// Exploration margin, in units of the scores' standard deviation.
constexpr double kXi = 0.01;

double normal_pdf(double z) {
  return std::exp(-0.5 * z * z) / std::sqrt(2 * M_PI);
}
double normal_cdf(double z) {
  return 0.5 * std::erfc(-z / std::sqrt(2.0));
}

}  // namespace

double expected_improvement(const Prediction& p, double best, double xi) {
  const double gain = p.mean - best - xi;
  if (p.stddev <= 0) return std::max(gain, 0.0);
  const double z = gain / p.stddev;
  return gain * normal_cdf(z) + p.stddev * normal_pdf(z);
}

BayesianOptimizer::BayesianOptimizer(std::vector<std::pair<double, double>> bounds, double noise)
    : bounds_(std::move(bounds)), noise_(noise) {
  if (bounds_.empty()) throw InvalidArgument("Bayesian optimization needs at least one parameter");
  for (const auto& [low, high] : bounds_)
    if (!(low < high))
      throw InvalidArgument(fmt::format("parameter bounds [{}, {}] are empty", low, high));
}

Eigen::VectorXd BayesianOptimizer::normalize(const Eigen::VectorXd& point) const {
  Eigen::VectorXd unit(point.size());
  for (Eigen::Index i = 0; i < point.size(); ++i) {
    const auto [low, high] = bounds_[static_cast<size_t>(i)];
    unit(i) = std::clamp((point(i) - low) / (high - low), 0.0, 1.0);
  }
  return unit;
}

Eigen::VectorXd BayesianOptimizer::denormalize(const Eigen::VectorXd& unit) const {
  Eigen::VectorXd point(unit.size());
  for (Eigen::Index i = 0; i < unit.size(); ++i) {
    const auto [low, high] = bounds_[static_cast<size_t>(i)];
    point(i) = low + std::clamp(unit(i), 0.0, 1.0) * (high - low);
  }
  return point;
}

void BayesianOptimizer::add_sample(const Eigen::VectorXd& point, double score) {
  if (point.size() != static_cast<Eigen::Index>(bounds_.size()))
    throw InvalidArgument(
        fmt::format("a sample has {} coordinates, the box {}", point.size(), bounds_.size()));
  points_.push_back(normalize(point));
  scores_.push_back(score);
  if (scores_.size() == 1 || score > best_score_) {
    best_score_ = score;
    best_point_ = denormalize(points_.back());
  }
}

double BayesianOptimizer::acquisition(const GaussianProcess& gp,
                                      const Eigen::VectorXd& unit) const {
  return expected_improvement(gp.predict(unit), incumbent_, xi_);
}

Eigen::VectorXd BayesianOptimizer::refine(const GaussianProcess& gp, Eigen::VectorXd unit) const {
  // Compass search: step along each axis while the acquisition improves,
  // halving the step when no move helps.
  double value = acquisition(gp, unit);
  for (double step = 0.05; step > 1e-3; step /= 2) {
    bool moved = true;
    while (moved) {
      moved = false;
      for (Eigen::Index i = 0; i < unit.size(); ++i) {
        for (double direction : {-1.0, 1.0}) {
          Eigen::VectorXd trial = unit;
          trial(i) = std::clamp(trial(i) + direction * step, 0.0, 1.0);
          const double v = acquisition(gp, trial);
          if (v > value) {
            value = v;
            unit = trial;
            moved = true;
          }
        }
      }
    }
  }
  return unit;
}

Eigen::VectorXd BayesianOptimizer::next_sample() {
  const auto d = static_cast<Eigen::Index>(bounds_.size());
  if (scores_.empty()) return denormalize(Eigen::VectorXd::Constant(d, 0.5));

  Eigen::MatrixXd x(static_cast<Eigen::Index>(points_.size()), d);
  Eigen::VectorXd y(static_cast<Eigen::Index>(scores_.size()));
  for (size_t i = 0; i < points_.size(); ++i) {
    x.row(static_cast<Eigen::Index>(i)) = points_[i].transpose();
    y(static_cast<Eigen::Index>(i)) = scores_[i];
  }
  GaussianProcess gp(noise_);
  gp.fit(x, y);
  // The margin scales with the scores' spread, so it means the same for
  // every workload's units.
  incumbent_ = best_score_;
  xi_ = kXi * std::sqrt((y.array() - y.mean()).square().mean());

  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<std::pair<double, Eigen::VectorXd>> candidates;
  candidates.reserve(kCandidates + 2 * static_cast<size_t>(d));
  for (int c = 0; c < kCandidates; ++c) {
    Eigen::VectorXd unit(d);
    for (Eigen::Index i = 0; i < d; ++i) unit(i) = uniform(random_);
    candidates.emplace_back(acquisition(gp, unit), std::move(unit));
  }
  // The box's edges too: an optimum at a bound (a fusion threshold of 0,
  // the shortest cycle) is common and random points rarely land on it.
  for (Eigen::Index i = 0; i < d; ++i) {
    for (double edge : {0.0, 1.0}) {
      Eigen::VectorXd unit = normalize(best_point_);
      unit(i) = edge;
      candidates.emplace_back(acquisition(gp, unit), std::move(unit));
    }
  }
  std::partial_sort(candidates.begin(), candidates.begin() + kRefined, candidates.end(),
                    [](const auto& a, const auto& b) { return a.first > b.first; });
  Eigen::VectorXd best = candidates.front().second;
  double best_value = -1;
  for (int i = 0; i < kRefined; ++i) {
    Eigen::VectorXd refined = refine(gp, candidates[static_cast<size_t>(i)].second);
    const double v = acquisition(gp, refined);
    if (v > best_value) {
      best_value = v;
      best = std::move(refined);
    }
  }
  return denormalize(best);
}

}  // namespace kolo::core::autotune
