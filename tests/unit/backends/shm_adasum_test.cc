// Adasum through HostBackend on every layout of a power-of-two number of
// ranks: through the shared-memory segment where all ranks share one host,
// over the TCP mesh across hosts. Each run is checked three ways: against
// the serial reference of the formula (within the type's rounding), for the
// same bits on every rank, and for the same bits as the TCP path
// (collectives::adasum_allreduce over a TCP-only backend on the same
// inputs), which the shared-memory path must match exactly.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>

#include "backends/host/host_topology.h"
#include "collectives/adasum/adasum.h"
#include "common/error.h"
#include "unit/backends/topology_fixture.h"
#include "unit/collectives/reference.h"

namespace kolo::testing {
namespace {

using Vector = std::vector<double>;
using Backends = std::vector<std::unique_ptr<backends::HostBackend>>;

// Each rank's tensor shares a direction with the others' and has its own
// part, so no pair is parallel or orthogonal and every coefficient counts.
Vector rank_tensor(size_t count, int rank, size_t tensor) {
  Vector v(count);
  for (size_t i = 0; i < count; ++i) {
    const double x = static_cast<double>(i);
    v[i] = std::sin(0.37 * x + static_cast<double>(tensor)) +
           0.6 * std::cos(1.3 * x * (rank + 1) + 0.5) + 0.1 * rank;
  }
  return v;
}

transport::shm::ShmOptions tcp_only() {
  transport::shm::ShmOptions shm = small_slot_options();
  shm.enabled = false;
  return shm;
}

class ShmAdasumTest : public ::testing::TestWithParam<Layout> {
 protected:
  // The outputs [rank][tensor] of one fused Adasum of `counts` on `backends`.
  std::vector<std::vector<Bytes>> run(Backends& backends, DataType type,
                                      const std::vector<size_t>& counts, double prescale = 1.0,
                                      double postscale = 1.0) {
    const int n = static_cast<int>(backends.size());
    std::vector<std::vector<Bytes>> outputs(n, std::vector<Bytes>(counts.size()));
    const std::string failed = run_backends(backends, [&](backends::Backend& b) {
      const int r = b.rank();
      std::vector<Bytes> inputs;
      std::vector<collectives::FusedPart> parts;
      for (size_t t = 0; t < counts.size(); ++t) inputs.push_back(input(type, counts[t], r, t));
      for (size_t t = 0; t < counts.size(); ++t) {
        outputs[r][t].assign(inputs[t].size(), 0xcd);
        parts.push_back({inputs[t].data(), outputs[r][t].data(), counts[t]});
      }
      const Reduction adasum{ReduceOp::kAdasum, prescale, postscale};
      if (parts.size() == 1) {
        b.allreduce(parts[0].input, parts[0].output, counts[0], type, adasum);
      } else {
        b.allreduce_parts(parts, type, adasum);
      }
    });
    EXPECT_EQ(failed, "");
    return outputs;
  }

  static Bytes input(DataType type, size_t count, int rank, size_t tensor) {
    const Vector v = rank_tensor(count, rank, tensor);
    Bytes out(count * dtype_size(type));
    for (size_t i = 0; i < count; ++i) store_float(type, out, i, v[i]);
    return out;
  }

  // Checks `got` (from the segment where the layout allows it) against the
  // reference and against `tcp`, the TCP path's outputs for the same call.
  void check(DataType type, const std::vector<size_t>& counts,
             const std::vector<std::vector<Bytes>>& got, const std::vector<std::vector<Bytes>>& tcp,
             double prescale, double postscale) {
    const int n = static_cast<int>(got.size());
    const std::string what =
        fmt::format("{} tensors of {} on {}", counts.size(), dtype_name(type), GetParam().name);
    for (size_t t = 0; t < counts.size(); ++t) {
      std::vector<Vector> stored(n);
      for (int r = 0; r < n; ++r) {
        const Bytes in = input(type, counts[t], r, t);
        for (size_t i = 0; i < counts[t]; ++i)
          stored[r].push_back(load_float(type, in, i) * prescale);
      }
      const Vector want = reference_adasum(stored);
      double scale = 0;
      for (double x : want) scale = std::max(scale, std::abs(x * postscale));
      for (size_t i = 0; i < counts[t]; ++i) {
        const double value = load_float(type, got[0][t], i);
        ASSERT_LE(std::abs(value - want[i] * postscale), adasum_tolerance(type) * scale)
            << what << ": tensor " << t << " element " << i;
      }
      for (int r = 0; r < n; ++r) {
        EXPECT_TRUE(got[r][t] == got[0][t]) << what << ": rank " << r << " differs from rank 0";
        EXPECT_TRUE(got[r][t] == tcp[r][t])
            << what << ": tensor " << t << " on rank " << r << " is not the TCP path's bits";
      }
    }
  }

  void compare_paths(DataType type, const std::vector<size_t>& counts, double prescale = 1.0,
                     double postscale = 1.0) {
    const auto got = run(shm_, type, counts, prescale, postscale);
    const auto tcp = run(tcp_, type, counts, prescale, postscale);
    check(type, counts, got, tcp, prescale, postscale);
  }

  void SetUp() override {
    shm_ = make_backends(GetParam().hosts);
    tcp_ = make_backends(GetParam().hosts, tcp_only());
  }

  Backends shm_, tcp_;
};

constexpr DataType kFloatingTypes[] = {DataType::kFloat16, DataType::kBFloat16, DataType::kFloat32,
                                       DataType::kFloat64};

TEST_P(ShmAdasumTest, OneTensorAsOverTcp) {
  // Up to many rounds of the 4 KiB slots at the first level.
  for (DataType type : kFloatingTypes)
    for (size_t count : {1, 2, 7, 1001, 65537}) compare_paths(type, {count});
}

TEST_P(ShmAdasumTest, FusedTensorsAsOverTcp) {
  // Empty tensors, tensors smaller than a rank's share, and more of them
  // than a slot holds sums for (3 doubles each: 4 KiB hold 170 tensors).
  for (DataType type : kFloatingTypes) compare_paths(type, {3, 0, 17, 250, 1, 4096});
  compare_paths(DataType::kFloat32, std::vector<size_t>(300, 5));
  compare_paths(DataType::kFloat64, {33, 1000}, 0.5, 3.0);
}

TEST_P(ShmAdasumTest, TakesTheSegmentOnOneHostOnly) {
  // Every member advances its phase once before and once after the Adasum
  // (the same on all, so the phases stay in line): the difference says how
  // many phases the Adasum itself made.
  const auto& hosts = GetParam().hosts;
  const bool one_host =
      std::count(hosts.begin(), hosts.end(), hosts[0]) == static_cast<long>(hosts.size());
  std::vector<uint32_t> phases(hosts.size());
  ASSERT_EQ(run_backends(shm_,
                         [&](backends::Backend& b) {
                           auto* host = dynamic_cast<backends::HostBackend*>(&b);
                           auto& group = *host->topology().shm;
                           const uint32_t before = group.advance();
                           std::vector<float> data(5000, 1.0f + static_cast<float>(b.rank()));
                           b.allreduce(data.data(), data.data(), data.size(), DataType::kFloat32,
                                       {ReduceOp::kAdasum});
                           phases[static_cast<size_t>(b.rank())] = group.advance() - before - 1;
                         }),
            "");
  for (size_t r = 0; r < hosts.size(); ++r) {
    if (one_host) {
      EXPECT_GT(phases[r], 0u) << "rank " << r;
    } else {
      EXPECT_EQ(phases[r], 0u) << "rank " << r << ": across hosts Adasum goes over TCP";
    }
  }
}

TEST_P(ShmAdasumTest, SegmentStaysUsableAfterwards) {
  // Adasum and the other shared-memory collectives take turns on the slots.
  for (int i = 0; i < 3; ++i) {
    compare_paths(DataType::kFloat32, {3000});
    std::vector<Bytes> sums(shm_.size());
    ASSERT_EQ(run_backends(shm_,
                           [&](backends::Backend& b) {
                             Bytes& data = sums[static_cast<size_t>(b.rank())];
                             data = make_input(DataType::kInt32, ReduceOp::kSum, 2000, b.rank(), 1);
                             b.allreduce(data.data(), data.data(), 2000, DataType::kInt32,
                                         {ReduceOp::kSum});
                           }),
              "");
    std::vector<Bytes> inputs;
    for (int r = 0; r < static_cast<int>(shm_.size()); ++r)
      inputs.push_back(make_input(DataType::kInt32, ReduceOp::kSum, 2000, r, 1));
    const Bytes expected = reference_reduce(DataType::kInt32, ReduceOp::kSum, inputs);
    for (const auto& got : sums) EXPECT_EQ(compare(DataType::kInt32, expected, got), "");
  }
}

// Power-of-two groups, as Adasum needs: one host (the segment), and hosts
// of two ranks each, contiguous or interleaved (TCP).
const Layout kAdasumLayouts[] = {
    {{0, 0}, "one_host_2"},
    {{0, 0, 0, 0}, "one_host_4"},
    {{0, 0, 0, 0, 0, 0, 0, 0}, "one_host_8"},
    {{0, 0, 1, 1}, "two_hosts_x2"},
    {{0, 1, 0, 1}, "two_hosts_interleaved"},
    {{0, 0, 1, 1, 2, 2, 3, 3}, "four_hosts_x2"},
};

INSTANTIATE_TEST_SUITE_P(Layouts, ShmAdasumTest, ::testing::ValuesIn(kAdasumLayouts),
                         [](const auto& layout) { return layout.param.name; });

TEST(ShmAdasumRefusal, ANonPowerOfTwoHostIsRefusedAndTheSegmentStaysUsable) {
  Backends backends = make_backends({0, 0, 0});
  std::vector<std::string> errors(3);
  ASSERT_EQ(run_backends(backends,
                         [&](backends::Backend& b) {
                           float value = 1;
                           try {
                             b.allreduce(&value, &value, 1, DataType::kFloat32,
                                         {ReduceOp::kAdasum});
                           } catch (const InvalidArgument& e) {
                             errors[static_cast<size_t>(b.rank())] = e.what();
                           }
                           float sum = 1;
                           b.allreduce(&sum, &sum, 1, DataType::kFloat32, {ReduceOp::kSum});
                           if (sum != 3) throw std::runtime_error("sum after the refusal is wrong");
                         }),
            "");
  for (const auto& e : errors) EXPECT_EQ(e, collectives::adasum_size_problem(3));
}

}  // namespace
}  // namespace kolo::testing
