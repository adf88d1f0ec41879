// The MPI backend (libkolo_mpi.so, loaded through the registry as the engine
// loads it), run under a real `mpirun -np N` by ctest (tests/mpi/CMakeLists.txt):
// every process is one rank and runs every test in the same order. Results
// are checked against the serial reference of the collectives tests; every
// rank computes every rank's input from the same seeds. EXPECT, not ASSERT,
// wherever a rank could otherwise skip a collective its peers make.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <numeric>
#include <string>
#include <vector>

#include "backends/registry.h"
#include "collectives/reference.h"

namespace kolo::backends {
namespace {

using testing::Bytes;
using testing::kAllOps;
using testing::kAllTypes;

class MpiBackendTest : public ::testing::Test {
 protected:
  void SetUp() override {
    world_ = connect_mpi_world({});
    ASSERT_NE(world_.backend, nullptr);
  }
  Backend& b() { return *world_.backend; }
  int rank() { return b().rank(); }
  int size() { return b().size(); }

  SelfConnectedWorld world_;
  uint64_t salt_ = 0;  // the same sequence on every rank
};

TEST_F(MpiBackendTest, LayoutOfOneHost) {
  EXPECT_EQ(b().name(), "mpi");
  EXPECT_EQ(world_.local_size, size());  // mpirun put every rank on this host
  EXPECT_EQ(world_.local_rank, rank());
  EXPECT_EQ(world_.cross_size, 1);
  EXPECT_EQ(world_.cross_rank, 0);
  EXPECT_NE(b().peer_name(0).find("rank 0 (host "), std::string::npos) << b().peer_name(0);
}

TEST_F(MpiBackendTest, AllreduceEveryTypeOpAndScale) {
  const int n = size();
  for (DataType type : kAllTypes)
    for (ReduceOp op : kAllOps)
      for (auto [prescale, postscale] : {std::pair{1.0, 1.0}, std::pair{2.0, 0.5}})
        for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{1001}})
          for (bool in_place : {false, true}) {
            const Reduction reduction{op, prescale, postscale};
            if (!reduction_problem(reduction, type).empty()) continue;
            std::vector<Bytes> inputs;
            for (int r = 0; r < n; ++r)
              inputs.push_back(testing::make_input(type, op, count, r, ++salt_));
            const Bytes expected = testing::reference_reduce(type, op, inputs, prescale, postscale);
            Bytes result = in_place ? inputs[rank()] : Bytes(count * dtype_size(type), 0xcd);
            b().allreduce(in_place ? result.data() : inputs[rank()].data(), result.data(), count,
                          type, reduction);
            EXPECT_EQ(testing::compare(type, expected, result), "")
                << dtype_name(type) << " " << static_cast<int>(op) << " x" << prescale << " count "
                << count << (in_place ? " in place" : "");
          }
}

TEST_F(MpiBackendTest, FusedPartsGoThroughTheDefault) {
  const int n = size();
  const std::vector<size_t> counts{0, 3, 1000};
  std::vector<Bytes> inputs;
  for (int r = 0; r < n; ++r)
    inputs.push_back(testing::make_input(DataType::kFloat32, ReduceOp::kSum, 1003, r, ++salt_));
  const Bytes expected = testing::reference_reduce(DataType::kFloat32, ReduceOp::kSum, inputs);
  Bytes result(1003 * 4, 0);
  std::vector<FusedPart> parts;
  size_t at = 0;
  for (size_t c : counts) {
    parts.push_back({inputs[rank()].data() + at * 4, result.data() + at * 4, c});
    at += c;
  }
  EXPECT_FALSE(b().reduces_parts_in_place(DataType::kFloat32, {}));
  b().allreduce_parts(parts, DataType::kFloat32, {});
  EXPECT_EQ(testing::compare(DataType::kFloat32, expected, result), "");
}

// Rank r contributes (r * 3) % 5 elements: some ranks none, uneven blocks.
std::vector<size_t> uneven_counts(int n, size_t scale) {
  std::vector<size_t> counts;
  for (int r = 0; r < n; ++r) counts.push_back(static_cast<size_t>(r * 3 % 5) * scale);
  return counts;
}

TEST_F(MpiBackendTest, AllgathervUnevenAndEmpty) {
  const int n = size();
  for (DataType type : {DataType::kUInt8, DataType::kFloat16, DataType::kInt64})
    for (size_t scale : {size_t{0}, size_t{1}, size_t{333}}) {
      const auto counts = uneven_counts(n, scale);
      const size_t e = dtype_size(type);
      Bytes expected;
      std::vector<Bytes> inputs;
      for (int r = 0; r < n; ++r) {
        inputs.push_back(testing::make_bytes(counts[r] * e, r, ++salt_));
        expected.insert(expected.end(), inputs[r].begin(), inputs[r].end());
      }
      Bytes result(expected.size(), 0xcd);
      b().allgatherv(inputs[rank()].data(), result.data(), counts, type);
      EXPECT_EQ(result, expected) << dtype_name(type) << " scale " << scale;
    }
}

TEST_F(MpiBackendTest, BroadcastFromEveryRoot) {
  for (int root = 0; root < size(); ++root)
    for (size_t count : {size_t{0}, size_t{1}, size_t{4097}}) {
      const Bytes expected = testing::make_bytes(count * 8, root, ++salt_);
      Bytes data = rank() == root ? expected : Bytes(count * 8, 0);
      b().broadcast(data.data(), count, DataType::kFloat64, root);
      EXPECT_EQ(data, expected) << "root " << root << " count " << count;
    }
}

TEST_F(MpiBackendTest, AlltoallvUneven) {
  const int n = size();
  // Rank s sends (s + d) % 3 * 5 int32 elements to rank d.
  auto count = [](int s, int d) { return static_cast<size_t>((s + d) % 3 * 5); };
  auto block = [&](int s, int d) { return testing::make_bytes(count(s, d) * 4, s * 100 + d, 7); };
  Bytes send;
  std::vector<size_t> send_counts;
  std::vector<size_t> recv_counts;
  Bytes expected;
  for (int d = 0; d < n; ++d) {
    const Bytes out = block(rank(), d);
    send.insert(send.end(), out.begin(), out.end());
    send_counts.push_back(count(rank(), d));
    const Bytes in = block(d, rank());
    expected.insert(expected.end(), in.begin(), in.end());
    recv_counts.push_back(count(d, rank()));
  }
  Bytes result(expected.size(), 0xcd);
  b().alltoallv(send.data(), send_counts, result.data(), recv_counts, DataType::kInt32);
  EXPECT_EQ(result, expected);
}

TEST_F(MpiBackendTest, ReduceScattervEveryTypeAndOp) {
  const int n = size();
  for (DataType type : kAllTypes)
    for (ReduceOp op : kAllOps)
      for (size_t scale : {size_t{0}, size_t{1}, size_t{101}}) {
        const Reduction reduction{op, op == ReduceOp::kAverage ? 2.0 : 1.0, 1.0};
        if (!reduction_problem(reduction, type).empty()) continue;
        const auto counts = uneven_counts(n, scale);
        const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
        std::vector<Bytes> inputs;
        for (int r = 0; r < n; ++r)
          inputs.push_back(testing::make_input(type, op, total, r, ++salt_));
        const Bytes all = testing::reference_reduce(type, op, inputs, reduction.prescale, 1.0);
        const size_t e = dtype_size(type);
        const size_t start =
            std::accumulate(counts.begin(), counts.begin() + rank(), size_t{0}) * e;
        const Bytes expected(all.begin() + static_cast<long>(start),
                             all.begin() + static_cast<long>(start + counts[rank()] * e));
        Bytes result(counts[rank()] * e, 0xcd);
        b().reduce_scatterv(inputs[rank()].data(), result.data(), counts, type, reduction);
        EXPECT_EQ(testing::compare(type, expected, result), "")
            << dtype_name(type) << " op " << static_cast<int>(op) << " scale " << scale;
      }
}

TEST_F(MpiBackendTest, ControlPlane) {
  b().barrier();
  for (int root = 0; root < size(); ++root) {
    // Rank r sends r * 1000 bytes (rank 0: an empty string).
    const std::string mine(static_cast<size_t>(rank()) * 1000, static_cast<char>('a' + rank()));
    const std::vector<std::string> got = b().gather_bytes(root, mine);
    if (rank() == root) {
      ASSERT_EQ(got.size(), static_cast<size_t>(size()));
      for (int r = 0; r < size(); ++r)
        EXPECT_EQ(got[r], std::string(static_cast<size_t>(r) * 1000, static_cast<char>('a' + r)));
    } else {
      EXPECT_TRUE(got.empty());
    }
    std::string data = rank() == root ? std::string(70000, 'x') + std::to_string(root) : "stale";
    b().broadcast_bytes(root, data);
    EXPECT_EQ(data, std::string(70000, 'x') + std::to_string(root));
  }
  // Bit r is set everywhere but on rank r: the AND clears exactly bits 0..n-1.
  std::vector<uint64_t> words{~(uint64_t{1} << rank()), ~uint64_t{0}};
  b().allreduce_and(words);
  const uint64_t cleared = (uint64_t{1} << size()) - 1;
  EXPECT_EQ(words[0], ~cleared);
  EXPECT_EQ(words[1], ~uint64_t{0});
}

TEST_F(MpiBackendTest, SubgroupsForProcessSets) {
  const int n = size();
  // The even ranks, and the last two ranks: overlapping sets, each created
  // by its members only.
  std::vector<int> evens;
  for (int r = 0; r < n; r += 2) evens.push_back(r);
  const std::vector<int> last_two = n >= 2 ? std::vector<int>{n - 2, n - 1} : std::vector<int>{0};
  uint32_t id = 1;
  for (const auto& ranks : {evens, last_two}) {
    const uint32_t group_id = id++;
    auto it = std::find(ranks.begin(), ranks.end(), rank());
    if (it == ranks.end()) continue;
    std::unique_ptr<Backend> sub = b().subgroup(ranks, group_id);
    ASSERT_EQ(sub->size(), static_cast<int>(ranks.size()));
    EXPECT_EQ(sub->rank(), static_cast<int>(it - ranks.begin()));
    // peer_name speaks of the job-wide rank.
    EXPECT_NE(sub->peer_name(sub->size() - 1).find("rank " + std::to_string(ranks.back()) + " "),
              std::string::npos);
    std::vector<int32_t> value{rank() + 1, 1};
    sub->allreduce(value.data(), value.data(), 2, DataType::kInt32, {ReduceOp::kSum});
    int32_t want = 0;
    for (int r : ranks) want += r + 1;
    EXPECT_EQ(value[0], want);
    EXPECT_EQ(value[1], static_cast<int32_t>(ranks.size()));
    std::string data = sub->rank() == 0 ? "from the set's first rank" : "";
    sub->broadcast_bytes(0, data);
    EXPECT_EQ(data, "from the set's first rank");
  }
  b().barrier();
}

}  // namespace
}  // namespace kolo::backends
