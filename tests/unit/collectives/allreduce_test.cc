// allreduce, each algorithm forced through the options, against the serial
// reference: every dtype x op on small counts, large counts on a
// representative subset, prescale/postscale/average, in and out of place.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "collectives/collectives.h"
#include "mesh_fixture.h"
#include "reference.h"

namespace kolo::testing {
namespace {

using collectives::AllreduceAlgorithm;
using collectives::CollectiveOptions;

struct Algorithm {
  AllreduceAlgorithm algorithm;
  size_t chunk_bytes;  // ring only
  const char* name;
};
// The ring with 1-byte chunks cuts every segment into single elements, so
// small counts exercise the chunk pipeline and its buffer reuse too.
constexpr Algorithm kAlgorithms[] = {
    {AllreduceAlgorithm::kRecursiveDoubling, 1 << 20, "recursive_doubling"},
    {AllreduceAlgorithm::kRing, 1 << 20, "ring"},
    {AllreduceAlgorithm::kRing, 1, "ring/1-byte chunks"},
};

struct Case {
  DataType type;
  ReduceOp op;
  size_t count;
  Algorithm algorithm;
  bool in_place = false;
  double prescale = 1.0;
  double postscale = 1.0;
  std::string describe() const {
    return fmt::format("{} {} count={} {} {} prescale={} postscale={}", dtype_name(type),
                       reduce_op_name(op), count, algorithm.name,
                       in_place ? "in-place" : "out-of-place", prescale, postscale);
  }
};

class AllreduceTest : public MeshTest {
 protected:
  // Runs the case on every rank; `inputs` default to make_input(), the
  // result is compared exactly with the reference (or within `tolerance` of
  // `expected`), and every rank must hold the same bits.
  void check(const Case& c, std::vector<Bytes> inputs = {},
             const Bytes* expected_override = nullptr, double tolerance = 0) {
    const int n = world_size();
    const uint64_t salt = next_salt_++;
    if (inputs.empty())
      for (int r = 0; r < n; ++r) inputs.push_back(make_input(c.type, c.op, c.count, r, salt));
    const Bytes expected = expected_override
                               ? *expected_override
                               : reference_reduce(c.type, c.op, inputs, c.prescale, c.postscale);
    CollectiveOptions options;
    options.allreduce_algorithm = c.algorithm.algorithm;
    options.ring_chunk_bytes = c.algorithm.chunk_bytes;
    const Tag tag = next_tag();
    std::vector<Bytes> results(n);
    std::vector<std::string> problems(n);
    run(c.describe(), [&](Context& ctx) {
      const int r = ctx.rank();
      Bytes send = inputs[r];
      Bytes& recv = results[r];
      recv = c.in_place ? send : Bytes(send.size(), 0xcd);
      collectives::allreduce(ctx, tag, c.in_place ? recv.data() : send.data(), recv.data(), c.count,
                             c.type, {c.op, c.prescale, c.postscale}, options);
      problems[r] = tolerance > 0 ? compare_near(c.type, expected, recv, tolerance)
                                  : compare(c.type, expected, recv);
      if (!c.in_place && send != inputs[r]) problems[r] += " (send buffer was modified)";
    });
    for (int r = 0; r < n; ++r) {
      EXPECT_EQ(problems[r], "") << c.describe() << " on rank " << r << " of " << n;
      EXPECT_TRUE(results[r] == results[0])
          << c.describe() << ": rank " << r << " differs from rank 0";
    }
  }

 private:
  uint64_t next_salt_ = 1;
};

TEST_P(AllreduceTest, EveryTypeOpAndAlgorithmOnSmallCounts) {
  for (DataType type : kAllTypes)
    for (ReduceOp op : kAllOps) {
      if (!reduce_op_supported(op, type)) continue;
      for (const Algorithm& algorithm : kAlgorithms)
        for (size_t count : {0, 1, 7})
          for (bool in_place : {false, true}) check({type, op, count, algorithm, in_place});
    }
}

TEST_P(AllreduceTest, ShardsOfEveryShapeInTheRing) {
  // Counts around the world size give empty, equal and unequal shards.
  const size_t n = world_size();
  for (const Algorithm& algorithm : kAlgorithms)
    for (size_t count : {n - 1, n, n + 1, 2 * n + 3, size_t{1000}})
      if (count > 0) check({DataType::kInt32, ReduceOp::kSum, count, algorithm});
}

TEST_P(AllreduceTest, LargeCounts) {
  if (!is_large_count_size(world_size())) GTEST_SKIP() << "large counts run on 2, 3, 5 and 8 ranks";
  const Algorithm algorithms[] = {kAlgorithms[0],
                                  {AllreduceAlgorithm::kRing, 64 << 10, "ring/64KiB chunks"}};
  for (const Algorithm& algorithm : algorithms)
    for (size_t count : {size_t{99991}, (size_t{1} << 20) + 3}) {
      check({DataType::kFloat32, ReduceOp::kSum, count, algorithm, false});
      check({DataType::kFloat16, ReduceOp::kSum, count, algorithm, true});
    }
  // The default options (auto: ring above the threshold, 1 MiB chunks).
  check({DataType::kBFloat16,
         ReduceOp::kAverage,
         (size_t{1} << 20) + 3,
         {AllreduceAlgorithm::kAuto, CollectiveOptions{}.ring_chunk_bytes, "auto"}});
}

TEST_P(AllreduceTest, PrescalePostscaleAndAverage) {
  struct Scaling {
    ReduceOp op;
    double prescale, postscale;
  };
  const Scaling scalings[] = {{ReduceOp::kAverage, 1.0, 1.0},
                              {ReduceOp::kSum, 2.0, 0.25},
                              {ReduceOp::kAverage, 0.5, 3.0},
                              {ReduceOp::kMax, 3.0, 1.0}};
  for (DataType type : kAllTypes) {
    if (type == DataType::kBool) continue;
    for (const Algorithm& algorithm : kAlgorithms)
      for (const Scaling& s : scalings)
        for (bool in_place : {false, true})
          check({type, s.op, 13, algorithm, in_place, s.prescale, s.postscale});
  }
}

TEST_P(AllreduceTest, SixteenBitSumsWithRoundingStayCloseAndAgree) {
  // Fractional inputs round at every step, in an order that depends on the
  // algorithm, so compare with the exact sum within a tolerance; the ranks
  // must still agree bit for bit (checked in check()).
  const int n = world_size();
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    const size_t count = 4099;
    std::vector<Bytes> inputs(n, Bytes(count * 2));
    std::vector<double> exact(count, 0.0);
    for (int r = 0; r < n; ++r) {
      const Bytes bits = make_bytes(count * 2, r, 77);
      for (size_t i = 0; i < count; ++i) {
        store_float(type, inputs[r], i,
                    (static_cast<double>(bits[2 * i] | bits[2 * i + 1] << 8) - 32768) / 10001.0);
        exact[i] += load_float(type, inputs[r], i);
      }
    }
    Bytes expected(count * 2);
    for (size_t i = 0; i < count; ++i) store_float(type, expected, i, exact[i]);
    // Inputs lie in [-3.3, 3.3], so partial sums stay below 27 in magnitude;
    // each of at most 7 additions rounds by half an ulp there (2^-7 for
    // float16, 2^-4 for bfloat16), plus the rounding of `expected` itself.
    const double tolerance = type == DataType::kFloat16 ? 0.1 : 0.6;
    for (const Algorithm& algorithm : kAlgorithms)
      check({type, ReduceOp::kSum, count, algorithm}, inputs, &expected, tolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(WorldSize, AllreduceTest, AllWorldSizes());

}  // namespace
}  // namespace kolo::testing
