// reduce_scatter against the serial reference: the shard layout of
// reduce_scatter_count/offset, every dtype x op, scaling, in and out of
// place, large counts on a subset.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include "collectives/collectives.h"
#include "mesh_fixture.h"
#include "reference.h"

namespace kolo::testing {
namespace {

using collectives::CollectiveOptions;

TEST(ReduceScatterLayout, ShardsTileTheBufferWithTheRemainderFirst) {
  for (int size = 1; size <= 9; ++size)
    for (size_t count : {0, 1, 5, 8, 9, 100, 99991}) {
      size_t next = 0;
      for (int r = 0; r < size; ++r) {
        EXPECT_EQ(collectives::reduce_scatter_offset(count, size, r), next);
        const size_t shard = collectives::reduce_scatter_count(count, size, r);
        EXPECT_EQ(shard, count / size + (static_cast<size_t>(r) < count % size ? 1 : 0));
        next += shard;
      }
      EXPECT_EQ(next, count);
    }
}

struct Case {
  DataType type;
  ReduceOp op;
  size_t count;
  size_t chunk_bytes = 1 << 20;
  bool in_place = false;
  double prescale = 1.0;
  double postscale = 1.0;
  std::string describe() const {
    return fmt::format("{} {} count={} chunk={} {} prescale={} postscale={}", dtype_name(type),
                       reduce_op_name(op), count, chunk_bytes,
                       in_place ? "in-place" : "out-of-place", prescale, postscale);
  }
};

class ReduceScatterTest : public MeshTest {
 protected:
  void check(const Case& c) {
    const int n = world_size();
    const uint64_t salt = next_salt_++;
    std::vector<Bytes> inputs;
    for (int r = 0; r < n; ++r) inputs.push_back(make_input(c.type, c.op, c.count, r, salt));
    const Bytes full = reference_reduce(c.type, c.op, inputs, c.prescale, c.postscale);
    CollectiveOptions options;
    options.ring_chunk_bytes = c.chunk_bytes;
    const Tag tag = next_tag();
    std::vector<std::string> problems(n);
    run(c.describe(), [&](Context& ctx) {
      const int r = ctx.rank();
      const size_t element = dtype_size(c.type);
      const size_t offset = collectives::reduce_scatter_offset(c.count, n, r) * element;
      const size_t shard = collectives::reduce_scatter_count(c.count, n, r) * element;
      const Bytes expected(full.begin() + offset, full.begin() + offset + shard);
      Bytes send = inputs[r];
      Bytes recv;
      if (c.in_place) {
        collectives::reduce_scatter(ctx, tag, send.data(), send.data(), c.count, c.type,
                                    {c.op, c.prescale, c.postscale}, options);
        recv.assign(send.begin(), send.begin() + shard);
      } else {
        recv.assign(shard, 0xcd);
        collectives::reduce_scatter(ctx, tag, send.data(), recv.data(), c.count, c.type,
                                    {c.op, c.prescale, c.postscale}, options);
        if (send != inputs[r]) problems[r] = "send buffer was modified; ";
      }
      problems[r] += compare(c.type, expected, recv);
    });
    for (int r = 0; r < n; ++r)
      EXPECT_EQ(problems[r], "") << c.describe() << " on rank " << r << " of " << n;
  }

 private:
  uint64_t next_salt_ = 1;
};

TEST_P(ReduceScatterTest, EveryTypeAndOpOnSmallCounts) {
  const size_t n = world_size();
  for (DataType type : kAllTypes)
    for (ReduceOp op : kAllOps) {
      if (!reduce_op_supported(op, type)) continue;
      // n - 1 leaves the last rank an empty shard.
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, n - 1, 2 * n + 1})
        for (bool in_place : {false, true}) check({type, op, count, 1 << 20, in_place});
    }
}

TEST_P(ReduceScatterTest, ChunkedSegments) {
  for (size_t chunk : {size_t{1}, size_t{12}, size_t{4096}})
    for (bool in_place : {false, true})
      check({DataType::kFloat32, ReduceOp::kSum, 3001, chunk, in_place});
}

TEST_P(ReduceScatterTest, PrescalePostscaleAndAverage) {
  for (DataType type : {DataType::kInt8, DataType::kInt32, DataType::kFloat16, DataType::kFloat32,
                        DataType::kFloat64})
    for (bool in_place : {false, true}) {
      check({type, ReduceOp::kAverage, 29, 8, in_place});
      check({type, ReduceOp::kSum, 29, 8, in_place, 2.0, 0.25});
      check({type, ReduceOp::kAverage, 29, 1 << 20, in_place, 0.5, 3.0});
    }
}

TEST_P(ReduceScatterTest, LargeCounts) {
  if (!is_large_count_size(world_size())) GTEST_SKIP() << "large counts run on 2, 3, 5 and 8 ranks";
  for (size_t count : {size_t{99991}, (size_t{1} << 20) + 3}) {
    check({DataType::kFloat32, ReduceOp::kSum, count, 64 << 10, false});
    check({DataType::kBFloat16, ReduceOp::kSum, count, 64 << 10, true});
  }
}

INSTANTIATE_TEST_SUITE_P(WorldSize, ReduceScatterTest, AllWorldSizes());

}  // namespace
}  // namespace kolo::testing
