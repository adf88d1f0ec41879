// allgather, allgatherv, alltoall and alltoallv: data movement only, so the
// inputs are arbitrary bytes and the expectation is the right bytes in the
// right places.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "collectives/collectives.h"
#include "common/error.h"
#include "mesh_fixture.h"
#include "reference.h"

namespace kolo::testing {
namespace {

using collectives::CollectiveOptions;

enum class Placement { kOutOfPlace, kAtOwnBlock, kSendIsRecv };
constexpr Placement kPlacements[] = {Placement::kOutOfPlace, Placement::kAtOwnBlock,
                                     Placement::kSendIsRecv};
const char* placement_name(Placement p) {
  return p == Placement::kOutOfPlace   ? "out-of-place"
         : p == Placement::kAtOwnBlock ? "at own block"
                                       : "send == recv";
}

size_t sum(const std::vector<size_t>& v) {
  return std::accumulate(v.begin(), v.end(), size_t{0});
}

class GatherTest : public MeshTest {
 protected:
  // allgatherv of counts[r] elements of `type` from each rank.
  void check_allgatherv(const std::vector<size_t>& counts, DataType type, size_t chunk_bytes,
                        Placement placement, bool equal_counts_api) {
    const int n = world_size();
    const size_t element = dtype_size(type);
    const std::string what = fmt::format("allgather{} {} counts[0]={} total={} chunk={} {}",
                                         equal_counts_api ? "" : "v", dtype_name(type), counts[0],
                                         sum(counts), chunk_bytes, placement_name(placement));
    std::vector<Bytes> inputs;
    Bytes expected;
    for (int r = 0; r < n; ++r) {
      inputs.push_back(make_bytes(counts[r] * element, r, next_tag()));
      expected.insert(expected.end(), inputs[r].begin(), inputs[r].end());
    }
    CollectiveOptions options;
    options.ring_chunk_bytes = chunk_bytes;
    const Tag tag = next_tag();
    std::vector<std::string> problems(n);
    run(what, [&](Context& ctx) {
      const int r = ctx.rank();
      const size_t own_offset = sum({counts.begin(), counts.begin() + r}) * element;
      Bytes recv(expected.size(), 0xcd);
      Bytes send = inputs[r];
      const void* source = send.data();
      if (placement == Placement::kAtOwnBlock) {
        std::copy(send.begin(), send.end(), recv.begin() + own_offset);
        source = recv.data() + own_offset;
      } else if (placement == Placement::kSendIsRecv) {
        std::copy(send.begin(), send.end(), recv.begin());
        source = recv.data();
      }
      if (equal_counts_api)
        collectives::allgather(ctx, tag, source, recv.data(), counts[0], type, options);
      else
        collectives::allgatherv(ctx, tag, source, recv.data(), counts, type, options);
      if (recv != expected) problems[r] = "wrong result";
      if (send != inputs[r]) problems[r] += " send buffer was modified";
    });
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(problems[r], "") << what << " on rank " << r << " of " << n;
  }

  // alltoallv where rank i sends counts(i, j) elements to rank j.
  void check_alltoallv(const std::function<size_t(int, int)>& counts, DataType type, bool in_place,
                       bool equal_counts_api) {
    const int n = world_size();
    const size_t element = dtype_size(type);
    const std::string what =
        fmt::format("alltoall{} {} counts(0,0)={} {}", equal_counts_api ? "" : "v",
                    dtype_name(type), counts(0, 0), in_place ? "in-place" : "out-of-place");
    std::vector<std::vector<size_t>> send_counts(n, std::vector<size_t>(n)),
        recv_counts = send_counts;
    std::vector<Bytes> inputs;
    for (int i = 0; i < n; ++i) {
      for (int j = 0; j < n; ++j)
        send_counts[i][j] = counts(i, j), recv_counts[i][j] = counts(j, i);
      inputs.push_back(make_bytes(sum(send_counts[i]) * element, i, next_tag()));
    }
    auto block = [&](int from, int to) {  // bytes rank `from` sends to `to`
      const size_t begin =
          sum({send_counts[from].begin(), send_counts[from].begin() + to}) * element;
      return Bytes(inputs[from].begin() + begin,
                   inputs[from].begin() + begin + send_counts[from][to] * element);
    };
    const Tag tag = next_tag();
    std::vector<std::string> problems(n);
    run(what, [&](Context& ctx) {
      const int r = ctx.rank();
      Bytes expected;
      for (int j = 0; j < n; ++j) {
        const Bytes b = block(j, r);
        expected.insert(expected.end(), b.begin(), b.end());
      }
      Bytes send = inputs[r];
      Bytes recv(expected.size(), 0xcd);
      if (in_place) {
        // Equal totals are needed for one buffer to serve both sides.
        send.resize(std::max(send.size(), recv.size()));
        recv = send;
      }
      void* out = recv.data();
      const void* in = in_place ? out : send.data();
      if (equal_counts_api)
        collectives::alltoall(ctx, tag, in, out, counts(0, 0), type, {});
      else
        collectives::alltoallv(ctx, tag, in, send_counts[r], out, recv_counts[r], type, {});
      recv.resize(expected.size());
      if (recv != expected) problems[r] = "wrong result";
      if (!in_place && send != inputs[r]) problems[r] += " send buffer was modified";
    });
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(problems[r], "") << what << " on rank " << r << " of " << n;
  }
};

TEST_P(GatherTest, AllgatherEveryPlacementAndChunking) {
  for (DataType type :
       {DataType::kUInt8, DataType::kFloat16, DataType::kFloat32, DataType::kFloat64})
    for (size_t count : {0, 1, 7, 1000})
      for (size_t chunk : {size_t{3}, size_t{1} << 20})
        for (Placement placement : kPlacements)
          check_allgatherv(std::vector<size_t>(world_size(), count), type, chunk, placement, true);
}

TEST_P(GatherTest, AllgathervWithUnequalAndZeroCounts) {
  const int n = world_size();
  std::vector<std::vector<size_t>> shapes;
  std::vector<size_t> varied(n), one_nonzero(n, 0), ramp(n);
  for (int r = 0; r < n; ++r) varied[r] = (r * 5 + 2) % 4, ramp[r] = 100 * r + 1;
  one_nonzero[n - 1] = 9;
  shapes = {varied, one_nonzero, ramp, std::vector<size_t>(n, 0)};
  for (const auto& counts : shapes)
    for (size_t chunk : {size_t{4}, size_t{1} << 20})
      for (Placement placement : kPlacements)
        check_allgatherv(counts, DataType::kInt32, chunk, placement, false);
}

TEST_P(GatherTest, AllgatherLargeCounts) {
  if (!is_large_count_size(world_size())) GTEST_SKIP() << "large counts run on 2, 3, 5 and 8 ranks";
  check_allgatherv(std::vector<size_t>(world_size(), 99991), DataType::kFloat32, 64 << 10,
                   Placement::kOutOfPlace, true);
  std::vector<size_t> counts(world_size());
  for (int r = 0; r < world_size(); ++r) counts[r] = r % 2 ? 0 : (size_t{1} << 18) + r;
  check_allgatherv(counts, DataType::kFloat16, 1 << 20, Placement::kAtOwnBlock, false);
}

TEST_P(GatherTest, AlltoallEveryCountInAndOutOfPlace) {
  for (DataType type : {DataType::kUInt8, DataType::kBFloat16, DataType::kInt64})
    for (size_t count : {0, 1, 7, 1000})
      for (bool in_place : {false, true})
        check_alltoallv([count](int, int) { return count; }, type, in_place, true);
}

TEST_P(GatherTest, AlltoallvWithUnequalAndZeroCounts) {
  check_alltoallv([](int i, int j) { return static_cast<size_t>((i * 7 + j * 3) % 4); },
                  DataType::kFloat32, false, false);
  check_alltoallv([](int i, int j) { return static_cast<size_t>(i == j ? 5 : 0); }, DataType::kInt8,
                  false, false);
  check_alltoallv([](int i, int j) { return static_cast<size_t>(100 * i + j); }, DataType::kInt32,
                  false, false);
  // In place with symmetric counts, so send and recv totals match.
  check_alltoallv([](int i, int j) { return static_cast<size_t>((i + j) % 3); }, DataType::kFloat64,
                  true, false);
}

TEST_P(GatherTest, AlltoallLargeCounts) {
  if (!is_large_count_size(world_size())) GTEST_SKIP() << "large counts run on 2, 3, 5 and 8 ranks";
  check_alltoallv([](int, int) { return size_t{99991}; }, DataType::kFloat32, false, true);
}

TEST_P(GatherTest, MalformedCountsThrowInvalidArgumentOnEveryRank) {
  const int n = world_size();
  run("malformed counts", [&](Context& ctx) {
    std::vector<size_t> short_counts(n + 1, 1), right(n, 1), self_mismatch(n, 1);
    self_mismatch[ctx.rank()] = 2;
    std::vector<float> buffer(4 * n + 4);
    EXPECT_THROW(collectives::allgatherv(ctx, 1, buffer.data(), buffer.data(), short_counts,
                                         DataType::kFloat32, {}),
                 InvalidArgument);
    EXPECT_THROW(collectives::alltoallv(ctx, 1, buffer.data(), right, buffer.data(), short_counts,
                                        DataType::kFloat32, {}),
                 InvalidArgument);
    EXPECT_THROW(collectives::alltoallv(ctx, 1, buffer.data(), right, buffer.data(), self_mismatch,
                                        DataType::kFloat32, {}),
                 InvalidArgument);
  });
}

INSTANTIATE_TEST_SUITE_P(WorldSize, GatherTest, AllWorldSizes());

}  // namespace
}  // namespace kolo::testing
