// The autotuner's mathematics alone: the Gaussian process fits known
// functions, expected improvement prefers what it should, and the Bayesian
// optimizer finds the optimum of synthetic functions within a budget.
#include <gtest/gtest.h>

#include <cmath>
#include <tuple>

#include "common/error.h"
#include "core/autotune/bayesian_optimizer.h"
#include "core/autotune/gaussian_process.h"

namespace kolo::core::autotune {
namespace {

Eigen::VectorXd vec(std::initializer_list<double> v) {
  Eigen::VectorXd out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) out(i++) = x;
  return out;
}

// Horovod's four starting points over (fusion MiB, cycle ms), then the
// optimizer's proposals, until `samples` have been scored.
template <typename Score>
void search(BayesianOptimizer& opt, Score score, size_t samples) {
  for (const auto& start : {vec({4, 5}), vec({32, 50}), vec({16, 25}), vec({8, 10})})
    opt.add_sample(start, score(start));
  while (opt.samples() < samples) {
    const Eigen::VectorXd next = opt.next_sample();
    opt.add_sample(next, score(next));
  }
}

TEST(GaussianProcess, FitsASineIn1D) {
  // 12 points of sin(2 pi x) on [0, 1]; predictions between them within 0.05.
  const int n = 12;
  Eigen::MatrixXd x(n, 1);
  Eigen::VectorXd y(n);
  for (int i = 0; i < n; ++i) {
    x(i, 0) = i / double(n - 1);
    y(i) = std::sin(2 * M_PI * x(i, 0));
  }
  GaussianProcess gp(1e-6);
  gp.fit(x, y);
  for (double t = 0.04; t < 1; t += 0.09) {
    const Prediction p = gp.predict(vec({t}));
    EXPECT_NEAR(p.mean, std::sin(2 * M_PI * t), 0.05) << "at " << t;
    EXPECT_LT(p.stddev, 0.2) << "at " << t;
  }
  // At a fitted point, almost no uncertainty; far outside, the prior's.
  EXPECT_LT(gp.predict(vec({x(3, 0)})).stddev, 0.01);
}

TEST(GaussianProcess, FitsA2DBowlInItsOwnUnits) {
  // Scores in the millions (bytes per second): standardization makes one
  // noise setting fit any scale.
  auto f = [](double a, double b) {
    return 5e6 - 4e6 * ((a - 0.3) * (a - 0.3) + (b - 0.6) * (b - 0.6));
  };
  Eigen::MatrixXd x(25, 2);
  Eigen::VectorXd y(25);
  int k = 0;
  for (int i = 0; i < 5; ++i)
    for (int j = 0; j < 5; ++j, ++k) {
      x(k, 0) = i / 4.0;
      x(k, 1) = j / 4.0;
      y(k) = f(x(k, 0), x(k, 1));
    }
  GaussianProcess gp(1e-6);
  gp.fit(x, y);
  for (auto [a, b] : {std::pair{0.3, 0.6}, std::pair{0.1, 0.9}, std::pair{0.6, 0.2}})
    EXPECT_NEAR(gp.predict(vec({a, b})).mean, f(a, b), 0.03e6) << a << "," << b;
}

TEST(GaussianProcess, NoiseSmoothsInsteadOfInterpolating) {
  Eigen::MatrixXd x(4, 1);
  x << 0.1, 0.1, 0.9, 0.9;
  Eigen::VectorXd y(4);
  y << 1, 3, 10, 12;  // two noisy measurements per point
  GaussianProcess noisy(0.5), exact(1e-6);
  noisy.fit(x, y);
  exact.fit(x, y);
  // Between the two measurements of each point, and less sure of it than
  // a fit that trusts every measurement.
  for (auto [at, low, high] : {std::tuple{0.1, 1.0, 3.0}, std::tuple{0.9, 10.0, 12.0}}) {
    const Prediction p = noisy.predict(vec({at}));
    EXPECT_GT(p.mean, low);
    EXPECT_LT(p.mean, high);
    EXPECT_GT(p.stddev, exact.predict(vec({at})).stddev);
  }
}

TEST(GaussianProcess, RefusesMismatchedInput) {
  GaussianProcess gp(0.1);
  EXPECT_THROW(gp.fit(Eigen::MatrixXd(0, 1), Eigen::VectorXd(0)), InvalidArgument);
  EXPECT_THROW(gp.fit(Eigen::MatrixXd(3, 1), Eigen::VectorXd(2)), InvalidArgument);
  EXPECT_THROW(GaussianProcess(-1), InvalidArgument);
}

TEST(ExpectedImprovement, PrefersHigherMeanThenMoreUncertainty) {
  // Same uncertainty: the higher mean wins.
  EXPECT_GT(expected_improvement({2.0, 0.5}, 1.0, 0.0), expected_improvement({1.5, 0.5}, 1.0, 0.0));
  // Same mean below the best: the more uncertain point wins (exploration).
  EXPECT_GT(expected_improvement({0.5, 1.0}, 1.0, 0.0), expected_improvement({0.5, 0.1}, 1.0, 0.0));
  // No uncertainty: exactly the gain, never negative.
  EXPECT_DOUBLE_EQ(expected_improvement({3.0, 0.0}, 1.0, 0.5), 1.5);
  EXPECT_DOUBLE_EQ(expected_improvement({0.0, 0.0}, 1.0, 0.0), 0.0);
  // The closed form at z = 0: sd * phi(0).
  EXPECT_NEAR(expected_improvement({1.0, 2.0}, 1.0, 0.0), 2.0 / std::sqrt(2 * M_PI), 1e-12);
}

TEST(BayesianOptimizer, ProposesThePeakOfAKnownFit) {
  // Samples on both sides of a peak at 30 in [0, 100]: the next point is
  // near it, not at the sampled ends.
  BayesianOptimizer opt({{0, 100}}, 1e-4);
  for (double x : {0.0, 10.0, 20.0, 40.0, 60.0, 80.0, 100.0})
    opt.add_sample(vec({x}), -(x - 30) * (x - 30));
  const Eigen::VectorXd next = opt.next_sample();
  EXPECT_NEAR(next(0), 30, 6);
  EXPECT_DOUBLE_EQ(opt.best_point()(0), 20);  // sampled best: 20 and 40 tie, first kept
}

TEST(BayesianOptimizer, FindsThe2DOptimumWithinTwentySamples) {
  // A throughput-like surface over (fusion MiB 0-64, cycle ms 1-100): best
  // at (20, 8), falling off smoothly.
  auto score = [](const Eigen::VectorXd& p) {
    const double a = (p(0) - 20) / 64, b = (p(1) - 8) / 99;
    return 100 * std::exp(-6 * (a * a + b * b));
  };
  BayesianOptimizer opt({{0, 64}, {1, 100}}, 0.01);
  search(opt, score, 20);
  EXPECT_GT(opt.best_score(), 0.97 * 100) << opt.best_point().transpose();
  EXPECT_NEAR(opt.best_point()(0), 20, 8);
  EXPECT_NEAR(opt.best_point()(1), 8, 10);
}

TEST(BayesianOptimizer, FindsAnOptimumOnTheEdgeOfTheBox) {
  // Best at the smallest cycle time and largest threshold: a corner.
  auto score = [](const Eigen::VectorXd& p) { return p(0) / 64 - (p(1) - 1) / 99; };
  BayesianOptimizer opt({{0, 64}, {1, 100}}, 0.01);
  search(opt, score, 15);
  EXPECT_GT(opt.best_score(), 0.9);
}

TEST(BayesianOptimizer, IsDeterministic) {
  auto run = [] {
    BayesianOptimizer opt({{0, 1}, {0, 1}}, 0.2);
    opt.add_sample(vec({0.2, 0.2}), 1);
    opt.add_sample(vec({0.8, 0.4}), 2);
    return opt.next_sample();
  };
  EXPECT_EQ(run(), run());
}

}  // namespace
}  // namespace kolo::core::autotune
