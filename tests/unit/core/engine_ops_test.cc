// Every collective through the engine, with the shapes Horovod allows:
// allgather with a first dimension that differs per rank, alltoall with
// uneven splits, reducescatter whose rows do not divide evenly.
#include <gtest/gtest.h>

#include <cstring>

#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using testing::run_engines;
using testing::wait_for;

template <typename T>
std::vector<T> result_as(const Handle& h) {
  const auto& data = h->result().data;
  std::vector<T> out(data.size() / sizeof(T));
  std::memcpy(out.data(), data.data(), data.size());
  return out;
}

TEST(EngineOps, AllgatherWithDifferentFirstDimensions) {
  run_engines(3, [](Engine& engine, int rank) {
    // rank r contributes r+1 rows of 2 int32 values {r, row}.
    std::vector<int32_t> in;
    for (int row = 0; row <= rank; ++row) {
      in.push_back(rank);
      in.push_back(row);
    }
    TensorArgs t{"gather", in.data(), nullptr, DataType::kInt32, {rank + 1, 2}, kCpuDevice};
    auto h = engine.allgather(t);
    ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
    EXPECT_EQ(h->result().shape, (std::vector<int64_t>{6, 2}));
    std::vector<int32_t> expected{0, 0, 1, 0, 1, 1, 2, 0, 2, 1, 2, 2};
    EXPECT_EQ(result_as<int32_t>(h), expected);
  });
}

TEST(EngineOps, BroadcastFromEveryRoot) {
  run_engines(3, [](Engine& engine, int rank) {
    for (int root = 0; root < 3; ++root) {
      std::vector<double> data(33, rank == root ? 7.5 + root : -1.0);
      TensorArgs t{"bcast." + std::to_string(root),
                   data.data(),
                   data.data(),
                   DataType::kFloat64,
                   {33},
                   kCpuDevice};
      auto h = engine.broadcast(t, root);
      ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
      EXPECT_EQ(data[32], 7.5 + root);
    }
  });
}

TEST(EngineOps, AlltoallWithUnevenSplitsReturnsReceivedSplits) {
  run_engines(3, [](Engine& engine, int rank) {
    // rank r sends (j+1) rows to rank j; each row is {100*r + j}.
    std::vector<int64_t> splits{1, 2, 3};
    std::vector<int64_t> in;
    for (int j = 0; j < 3; ++j) {
      for (int k = 0; k <= j; ++k) in.push_back(100 * rank + j);
    }
    TensorArgs t{"a2a", in.data(), nullptr, DataType::kInt64, {6}, kCpuDevice};
    auto h = engine.alltoall(t, splits);
    ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
    EXPECT_EQ(h->result().received_splits, (std::vector<int64_t>(3, rank + 1)));
    std::vector<int64_t> expected;
    for (int src = 0; src < 3; ++src) {
      for (int k = 0; k <= rank; ++k) expected.push_back(100 * src + rank);
    }
    EXPECT_EQ(result_as<int64_t>(h), expected);
  });
}

TEST(EngineOps, ReducescatterSplitsRowsUnevenly) {
  run_engines(3, [](Engine& engine, int rank) {
    // 5 rows of 2: ranks get 2, 2, 1 rows.
    std::vector<float> in(10);
    for (int i = 0; i < 10; ++i) in[i] = static_cast<float>(i * (rank + 1));
    TensorArgs t{"rs", in.data(), nullptr, DataType::kFloat32, {5, 2}, kCpuDevice};
    auto h = engine.reducescatter(t, {ReduceOp::kSum});
    ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
    int64_t rows = rank < 2 ? 2 : 1;
    int64_t first_row = rank * 2;
    EXPECT_EQ(h->result().shape, (std::vector<int64_t>{rows, 2}));
    auto out = result_as<float>(h);
    ASSERT_EQ(out.size(), static_cast<size_t>(rows * 2));
    for (int64_t i = 0; i < rows * 2; ++i)
      EXPECT_EQ(out[i], static_cast<float>((first_row * 2 + i) * 6));
  });
}

TEST(EngineOps, ReducescatterEvenRowsAndBarrier) {
  run_engines(2, [](Engine& engine, int rank) {
    std::vector<int32_t> in{1, 2, 3, 4};
    TensorArgs t{"rs_even", in.data(), nullptr, DataType::kInt32, {4}, kCpuDevice};
    auto h = engine.reducescatter(t, {ReduceOp::kSum});
    ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
    EXPECT_EQ(result_as<int32_t>(h),
              rank == 0 ? (std::vector<int32_t>{2, 4}) : (std::vector<int32_t>{6, 8}));
    auto b = engine.barrier();
    ASSERT_TRUE(wait_for(b).ok()) << b->status().ToString();
  });
}

TEST(EngineOps, PrescaleAndPostscaleApplyAroundTheSum) {
  run_engines(2, [](Engine& engine, int rank) {
    std::vector<float> in(4, 1.0f), out(4);
    TensorArgs t{"scaled", in.data(), out.data(), DataType::kFloat32, {4}, kCpuDevice};
    auto h = engine.allreduce(t, {ReduceOp::kSum, 2.0, 0.25});
    ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
    EXPECT_EQ(out[0], 1.0f);  // (1*2 + 1*2) * 0.25
  });
}

TEST(EngineOps, FusionMixesDtypesAndOpsCorrectly) {
  run_engines(2, [](Engine& engine, int rank) {
    std::vector<float> f(100, 1.0f), fo(100);
    std::vector<int32_t> i(50, rank + 1), io(50);
    std::vector<float> m(10, static_cast<float>(rank)), mo(10);
    std::vector<double> d(7, 0.5), dout(7);
    auto hf = engine.allreduce({"f", f.data(), fo.data(), DataType::kFloat32, {100}, kCpuDevice},
                               {ReduceOp::kSum});
    auto hi = engine.allreduce({"i", i.data(), io.data(), DataType::kInt32, {50}, kCpuDevice},
                               {ReduceOp::kProduct});
    auto hm = engine.allreduce({"m", m.data(), mo.data(), DataType::kFloat32, {10}, kCpuDevice},
                               {ReduceOp::kMax});
    auto hd = engine.allreduce({"d", d.data(), dout.data(), DataType::kFloat64, {7}, kCpuDevice},
                               {ReduceOp::kAverage});
    for (auto& h : {hf, hi, hm, hd}) ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
    EXPECT_EQ(fo[99], 2.0f);
    EXPECT_EQ(io[49], 2);
    EXPECT_EQ(mo[9], 1.0f);
    EXPECT_EQ(dout[6], 0.5);
  });
}

TEST(EngineOps, TinyFusionThresholdStillGivesCorrectResults) {
  testing::EngineRunOptions run;
  run.configure = [](Config& c) { c.engine.fusion_threshold_bytes = 64; };
  run_engines(
      2,
      [](Engine& engine, int rank) {
        std::vector<std::vector<float>> in(30, std::vector<float>(9, 1.0f)),
            out(30, std::vector<float>(9));
        std::vector<Handle> hs;
        for (int t = 0; t < 30; ++t) {
          hs.push_back(engine.allreduce({"t" + std::to_string(t),
                                         in[t].data(),
                                         out[t].data(),
                                         DataType::kFloat32,
                                         {9},
                                         kCpuDevice},
                                        {ReduceOp::kSum}));
        }
        for (auto& h : hs) ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
        for (auto& o : out) EXPECT_EQ(o[8], 2.0f);
      },
      run);
}

}  // namespace
}  // namespace kolo::core
