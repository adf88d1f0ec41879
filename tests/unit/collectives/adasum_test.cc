// Adasum (collectives/adasum/adasum.h) against a serial reference written
// from the formula (reference.cc: a plain recursive function over the
// ranks' vectors, in double), tensor by tensor. The collective sums in another order and rounds
// at each level, so results are compared within a tolerance of the type;
// every rank must still hold the same bits.
#include "collectives/adasum/adasum.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "collectives/collectives.h"
#include "common/error.h"
#include "mesh_fixture.h"
#include "reference.h"

namespace kolo::testing {
namespace {

using Vector = std::vector<double>;

// Rank r's tensor t: a direction shared by all ranks plus the rank's own
// noise, so the vectors are neither parallel nor orthogonal and every
// coefficient matters.
Vector make_tensor(size_t count, int rank, size_t tensor) {
  std::mt19937 shared(static_cast<uint32_t>(1000 + tensor));
  std::mt19937 own(static_cast<uint32_t>(rank * 7919 + tensor));
  std::uniform_real_distribution<double> uniform(-1, 1);
  Vector v(count);
  for (auto& x : v) x = uniform(shared);
  for (auto& x : v) x = x + 0.75 * uniform(own) + 0.1 * static_cast<double>(rank);
  return v;
}

Bytes to_bytes(DataType type, const Vector& v) {
  Bytes out(v.size() * dtype_size(type));
  for (size_t i = 0; i < v.size(); ++i) store_float(type, out, i, v[i]);
  return out;
}

Vector to_vector(DataType type, const Bytes& data) {
  Vector out(element_count(type, data));
  for (size_t i = 0; i < out.size(); ++i) out[i] = load_float(type, data, i);
  return out;
}

std::string compare(DataType type, const Vector& expected, const Vector& got) {
  double scale = 0;
  for (double x : expected) scale = std::max(scale, std::abs(x));
  for (size_t i = 0; i < expected.size(); ++i) {
    if (!(std::abs(got[i] - expected[i]) <= adasum_tolerance(type) * scale)) {
      return fmt::format("element {}: {} instead of {} ({})", i, got[i], expected[i],
                         dtype_name(type));
    }
  }
  return "";
}

class AdasumTest : public MeshTest {
 protected:
  struct Outcome {
    std::vector<std::vector<Bytes>> outputs;  // [rank][tensor]
    std::vector<std::vector<Vector>> inputs;  // [rank][tensor], as stored in the type
  };

  // Runs one Adasum over `counts` (one FusedPart per tensor) with each
  // rank's inputs from `input(rank, tensor)`; checks every rank's outputs
  // have the same bits and returns them.
  Outcome run_adasum(DataType type, const std::vector<size_t>& counts,
                     const std::function<Vector(int, size_t)>& input,
                     Reduction reduce = {ReduceOp::kAdasum}) {
    const int n = world_size();
    Outcome o;
    o.outputs.assign(n, std::vector<Bytes>(counts.size()));
    o.inputs.assign(n, std::vector<Vector>(counts.size()));
    std::vector<std::vector<Bytes>> sends(n, std::vector<Bytes>(counts.size()));
    for (int r = 0; r < n; ++r)
      for (size_t t = 0; t < counts.size(); ++t) {
        sends[r][t] = to_bytes(type, input(r, t));
        o.inputs[r][t] = to_vector(type, sends[r][t]);
        o.outputs[r][t].assign(sends[r][t].size(), 0xcd);
      }
    const Tag tag = next_tag();
    run(fmt::format("adasum of {} tensors of {}", counts.size(), dtype_name(type)),
        [&](Context& ctx) {
          const int r = ctx.rank();
          std::vector<collectives::FusedPart> parts;
          for (size_t t = 0; t < counts.size(); ++t)
            parts.push_back({sends[r][t].data(), o.outputs[r][t].data(), counts[t]});
          collectives::adasum_allreduce(ctx, tag, parts, type, reduce);
        });
    for (int r = 1; r < n; ++r)
      EXPECT_TRUE(o.outputs[r] == o.outputs[0]) << "rank " << r << " differs from rank 0";
    return o;
  }

  // The reference of tensor t over every rank's (stored) input.
  Vector expected(const Outcome& o, size_t t) {
    std::vector<Vector> per_rank;
    for (const auto& rank_inputs : o.inputs) per_rank.push_back(rank_inputs[t]);
    return reference_adasum(per_rank);
  }

  void check_against_reference(DataType type, const std::vector<size_t>& counts) {
    const auto o =
        run_adasum(type, counts, [&](int r, size_t t) { return make_tensor(counts[t], r, t); });
    for (size_t t = 0; t < counts.size(); ++t) {
      EXPECT_EQ(compare(type, expected(o, t), to_vector(type, o.outputs[0][t])), "")
          << "tensor " << t << " of " << counts.size() << ", " << world_size() << " ranks";
    }
  }
};

constexpr DataType kFloatingTypes[] = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                                       DataType::kFloat64};

TEST_P(AdasumTest, OneTensorMatchesTheFormula) {
  for (DataType type : kFloatingTypes)
    for (size_t count : {1, 2, 3, 7, 64, 1001, 65537}) check_against_reference(type, {count});
}

TEST_P(AdasumTest, FusedTensorsEachGetTheirOwnCoefficients) {
  // Tensors smaller than a rank's share, empty ones, and ones the halving
  // cuts at every level.
  for (DataType type : kFloatingTypes) {
    check_against_reference(type, {3, 0, 17, 250, 1, 4096});
    check_against_reference(type, {1, 1, 1, 1, 1});
  }
}

TEST_P(AdasumTest, PerTensorIsNotTheSameAsOneVector) {
  // Two tensors whose own coefficients differ a lot from those of their
  // concatenation: the first parallel across ranks, the second orthogonal.
  // Averaging the first and adding the second is only right per tensor.
  if (world_size() < 2) GTEST_SKIP() << "needs 2 ranks or more";
  const size_t n = static_cast<size_t>(world_size());
  const auto o = run_adasum(DataType::kFloat64, {4, n}, [&](int r, size_t t) {
    Vector v = t == 0 ? Vector{1, 2, 3, 4} : Vector(n, 0.0);
    if (t == 1) v[static_cast<size_t>(r)] = 5;
    return v;
  });
  EXPECT_EQ(to_vector(DataType::kFloat64, o.outputs[0][0]), (Vector{1, 2, 3, 4}));
  EXPECT_EQ(to_vector(DataType::kFloat64, o.outputs[0][1]), Vector(n, 5.0));
}

TEST_P(AdasumTest, ExactCases) {
  // Identical vectors are averaged, orthogonal ones added, and a zero
  // vector (a joined rank) changes nothing: all exact in floating point.
  const size_t n = static_cast<size_t>(world_size());
  auto same = run_adasum(DataType::kFloat32, {5}, [](int, size_t) {
    return Vector{0.5, -1.25, 3, 8, -0.125};
  });
  EXPECT_EQ(to_vector(DataType::kFloat32, same.outputs[0][0]), (Vector{0.5, -1.25, 3, 8, -0.125}));
  auto orthogonal = run_adasum(DataType::kFloat32, {2 * n}, [&](int r, size_t) {
    Vector v(2 * n, 0.0);
    v[2 * static_cast<size_t>(r)] = r + 1;
    v[2 * static_cast<size_t>(r) + 1] = -(r + 1);
    return v;
  });
  for (size_t i = 0; i < 2 * n; ++i) {
    const double magnitude = static_cast<double>(i / 2 + 1);
    EXPECT_EQ(to_vector(DataType::kFloat32, orthogonal.outputs[0][0])[i],
              i % 2 == 0 ? magnitude : -magnitude);
  }
}

TEST_P(AdasumTest, ZerosFromAJoinedRankAndNoOutput) {
  // Rank 0 passes no input (it contributes zeros) and no output; the
  // others get the Adasum of their own inputs.
  const int n = world_size();
  std::vector<Bytes> outputs(n, Bytes(64 * sizeof(float), 0xcd));
  std::vector<Vector> inputs(n);
  for (int r = 0; r < n; ++r) inputs[r] = r == 0 ? Vector(64, 0.0) : make_tensor(64, r, 0);
  const Tag tag = next_tag();
  run("joined rank", [&](Context& ctx) {
    const int r = ctx.rank();
    const Bytes send = to_bytes(DataType::kFloat32, inputs[r]);
    collectives::FusedPart part{r == 0 ? nullptr : send.data(),
                                r == 0 ? nullptr : outputs[r].data(), 64};
    collectives::adasum_allreduce(ctx, tag, {part}, DataType::kFloat32, {ReduceOp::kAdasum});
  });
  std::vector<Vector> stored;
  for (const auto& v : inputs)
    stored.push_back(to_vector(DataType::kFloat32, to_bytes(DataType::kFloat32, v)));
  const Vector want = reference_adasum(stored);
  for (int r = 1; r < n; ++r)
    EXPECT_EQ(compare(DataType::kFloat32, want, to_vector(DataType::kFloat32, outputs[r])), "")
        << "rank " << r;
  EXPECT_EQ(outputs[0], Bytes(64 * sizeof(float), 0xcd)) << "rank 0 had no output";
}

TEST_P(AdasumTest, PrescaleAndPostscale) {
  const auto o =
      run_adasum(DataType::kFloat64, {33}, [](int r, size_t) { return make_tensor(33, r, 5); },
                 {ReduceOp::kAdasum, 0.5, 3.0});
  std::vector<Vector> scaled;
  for (const auto& rank_inputs : o.inputs) {
    Vector v = rank_inputs[0];
    for (auto& x : v) x *= 0.5;
    scaled.push_back(v);
  }
  Vector want = reference_adasum(scaled);
  for (auto& x : want) x *= 3.0;
  EXPECT_EQ(compare(DataType::kFloat64, want, to_vector(DataType::kFloat64, o.outputs[0][0])), "");
}

TEST_P(AdasumTest, ThroughAllreduceInPlace) {
  // collectives::allreduce with op kAdasum takes the same algorithm.
  const int n = world_size();
  std::vector<Bytes> data(n);
  std::vector<Vector> stored(n);
  for (int r = 0; r < n; ++r) {
    data[r] = to_bytes(DataType::kFloat32, make_tensor(300, r, 9));
    stored[r] = to_vector(DataType::kFloat32, data[r]);
  }
  const Tag tag = next_tag();
  run("allreduce adasum", [&](Context& ctx) {
    auto& mine = data[ctx.rank()];
    collectives::allreduce(ctx, tag, mine.data(), mine.data(), 300, DataType::kFloat32,
                           {ReduceOp::kAdasum}, collectives::CollectiveOptions{});
  });
  const Vector want = reference_adasum(stored);
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(compare(DataType::kFloat32, want, to_vector(DataType::kFloat32, data[r])), "");
    EXPECT_EQ(data[r], data[0]);
  }
}

// Horovod runs Adasum on power-of-two rank counts only.
INSTANTIATE_TEST_SUITE_P(PowerOfTwoRanks, AdasumTest, ::testing::Values(1, 2, 4, 8),
                         ::testing::PrintToStringParamName());

class AdasumOtherSizesTest : public MeshTest {};

TEST_P(AdasumOtherSizesTest, EveryRankRefusesBeforeAnyMessage) {
  const int n = world_size();
  std::vector<std::string> errors(n);
  const Tag tag = next_tag();
  run("adasum on a non-power-of-two group", [&](Context& ctx) {
    float value = 1;
    try {
      collectives::adasum_allreduce(ctx, tag, {{&value, &value, 1}}, DataType::kFloat32,
                                    {ReduceOp::kAdasum});
    } catch (const InvalidArgument& e) {
      errors[ctx.rank()] = e.what();
    }
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(errors[r], fmt::format("Adasum needs a power-of-two number of ranks, as in Horovod; "
                                     "this group has {} ranks",
                                     n));
  }
  EXPECT_FALSE(collectives::adasum_size_supported(n));
}

INSTANTIATE_TEST_SUITE_P(OtherRankCounts, AdasumOtherSizesTest, ::testing::Values(3, 5, 6),
                         ::testing::PrintToStringParamName());

}  // namespace
}  // namespace kolo::testing
