// Disagreements between ranks become the same error on every rank, naming
// the tensor, the ranks and the values; calls that can never work fail at
// once on the caller's thread.
#include <gtest/gtest.h>

#include <limits>
#include <mutex>

#include "common/error.h"
#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using testing::run_engines;
using testing::wait_for;

// Runs `submit` on 3 ranks and returns each rank's error text.
std::vector<std::string> errors_on_three_ranks(const std::function<Handle(Engine&, int)>& submit) {
  std::vector<std::string> errors(3);
  run_engines(3, [&](Engine& engine, int rank) {
    Handle h = submit(engine, rank);
    Status status = wait_for(h);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    errors[rank] = status.message();
    // The engine keeps working after a mismatch.
    std::vector<float> in(2, 1.0f), out(2);
    auto ok = engine.allreduce(
        {"after", in.data(), out.data(), DataType::kFloat32, {2}, kCpuDevice}, {ReduceOp::kSum});
    EXPECT_TRUE(wait_for(ok).ok()) << ok->status().ToString();
    EXPECT_EQ(out[0], 3.0f);
  });
  EXPECT_EQ(errors[0], errors[1]);
  EXPECT_EQ(errors[0], errors[2]);
  return errors;
}

void expect_contains(const std::string& text, const std::vector<std::string>& parts) {
  for (const auto& part : parts)
    EXPECT_NE(text.find(part), std::string::npos) << "'" << part << "' not in: " << text;
}

TEST(EngineErrors, DtypeMismatchNamesTensorRanksAndTypes) {
  auto errors = errors_on_three_ranks([&](Engine& engine, int rank) {
    static thread_local std::vector<double> d(4);
    static thread_local std::vector<float> out(4);
    static thread_local std::vector<double> dout(4);
    if (rank == 1)
      return engine.allreduce({"w", d.data(), dout.data(), DataType::kFloat64, {4}, kCpuDevice},
                              {ReduceOp::kSum});
    return engine.allreduce({"w", d.data(), out.data(), DataType::kFloat32, {4}, kCpuDevice},
                            {ReduceOp::kSum});
  });
  expect_contains(errors[0], {"'w'", "data types", "ranks 0, 2: float32", "rank 1: float64"});
}

TEST(EngineErrors, ShapeMismatch) {
  auto errors = errors_on_three_ranks([](Engine& engine, int rank) {
    static thread_local std::vector<float> buf(12);
    std::vector<int64_t> shape =
        rank == 2 ? std::vector<int64_t>{3, 4} : std::vector<int64_t>{4, 3};
    return engine.allreduce(
        {"layer.weight", buf.data(), buf.data(), DataType::kFloat32, shape, kCpuDevice},
        {ReduceOp::kSum});
  });
  expect_contains(errors[0], {"'layer.weight'", "shapes", "ranks 0, 1: [4, 3]", "rank 2: [3, 4]"});
}

TEST(EngineErrors, AllgatherTrailingDimensionMismatch) {
  auto errors = errors_on_three_ranks([](Engine& engine, int rank) {
    static thread_local std::vector<float> buf(12);
    std::vector<int64_t> shape =
        rank == 0 ? std::vector<int64_t>{2, 6} : std::vector<int64_t>{rank + 1, 4};
    return engine.allgather({"g", buf.data(), nullptr, DataType::kFloat32, shape, kCpuDevice});
  });
  expect_contains(errors[0], {"'g'", "all dimensions but the first", "rank 0: [2, 6]",
                              "rank 1: [2, 4]", "rank 2: [3, 4]"});
}

TEST(EngineErrors, OperationRootOpAndScaleMismatches) {
  auto op_errors = errors_on_three_ranks([](Engine& engine, int rank) {
    static thread_local std::vector<float> buf(4);
    if (rank == 0)
      return engine.broadcast({"x", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice},
                              0);
    return engine.allreduce({"x", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice},
                            {ReduceOp::kSum});
  });
  expect_contains(op_errors[0],
                  {"'x'", "operations", "rank 0: broadcast", "ranks 1, 2: allreduce"});

  auto root_errors = errors_on_three_ranks([](Engine& engine, int rank) {
    static thread_local std::vector<float> buf(4);
    return engine.broadcast({"b", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice},
                            rank == 2 ? 1 : 0);
  });
  expect_contains(root_errors[0], {"'b'", "root ranks", "ranks 0, 1: 0", "rank 2: 1"});

  auto reduce_errors = errors_on_three_ranks([](Engine& engine, int rank) {
    static thread_local std::vector<float> buf(4);
    return engine.allreduce({"r", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice},
                            {rank == 1 ? ReduceOp::kMax : ReduceOp::kSum});
  });
  expect_contains(reduce_errors[0], {"'r'", "reduce ops", "rank 1: max"});

  auto scale_errors = errors_on_three_ranks([](Engine& engine, int rank) {
    static thread_local std::vector<float> buf(4);
    return engine.allreduce({"s", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice},
                            {ReduceOp::kSum, rank == 0 ? 0.5 : 1.0, 1.0});
  });
  expect_contains(scale_errors[0], {"'s'", "prescale", "rank 0: 0.5", "ranks 1, 2: 1"});
}

TEST(EngineErrors, MismatchAfterCachingStillReportedEverywhere) {
  run_engines(2, [](Engine& engine, int rank) {
    std::vector<float> buf(8, 1.0f);
    for (int step = 0; step < 3; ++step) {
      auto h = engine.allreduce({"c", buf.data(), buf.data(), DataType::kFloat32, {8}, kCpuDevice},
                                {ReduceOp::kMax});
      ASSERT_TRUE(wait_for(h).ok());
    }
    // rank 1 changes the shape of a cached tensor: a miss that must
    // invalidate rank 0's cache hit so both see the mismatch.
    std::vector<int64_t> shape = rank == 1 ? std::vector<int64_t>{4} : std::vector<int64_t>{8};
    auto h = engine.allreduce({"c", buf.data(), buf.data(), DataType::kFloat32, shape, kCpuDevice},
                              {ReduceOp::kMax});
    Status status = wait_for(h);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_NE(status.message().find("rank 1: [4]"), std::string::npos) << status.message();
  });
}

TEST(EngineErrors, CallsThatCanNeverWorkFailAtOnce) {
  Config config;
  Engine engine(config);
  std::vector<float> buf(4);
  auto expect_invalid = [](const std::function<void()>& call, const std::string& part) {
    try {
      call();
      ADD_FAILURE() << "accepted; expected an error containing '" << part << "'";
    } catch (const InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  };
  expect_invalid(
      [&] {
        engine.allreduce({"gpu", buf.data(), buf.data(), DataType::kFloat32, {4}, 0},
                         {ReduceOp::kSum});
      },
      "does not run collectives on CUDA tensors yet");
  expect_invalid(
      [&] {
        engine.allreduce({"bits", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice},
                         {ReduceOp::kBitAnd});
      },
      "not defined for float32");
  expect_invalid(
      [&] {
        engine.reducescatter({"scale", buf.data(), nullptr, DataType::kFloat32, {4}, kCpuDevice},
                             {ReduceOp::kSum, std::numeric_limits<double>::infinity()});
      },
      "prescale factor inf is not finite");
  expect_invalid(
      [&] {
        engine.broadcast({"root", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice}, 3);
      },
      "root rank 3");
  expect_invalid(
      [&] {
        engine.allgather({"scalar", buf.data(), nullptr, DataType::kFloat32, {}, kCpuDevice});
      },
      "scalar");
  expect_invalid(
      [&] {
        engine.alltoall({"split", buf.data(), nullptr, DataType::kFloat32, {4}, kCpuDevice}, {3});
      },
      "add up to 3");
  expect_invalid(
      [&] {
        engine.allreduce({"neg", buf.data(), buf.data(), DataType::kFloat32, {-1}, kCpuDevice},
                         {ReduceOp::kSum});
      },
      "negative");
  expect_invalid(
      [&] {
        engine.allreduce({"null", nullptr, buf.data(), DataType::kFloat32, {4}, kCpuDevice},
                         {ReduceOp::kSum});
      },
      "null");
  expect_invalid(
      [&] {
        engine.allreduce({"set", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice},
                         {ReduceOp::kSum}, 9);
      },
      "process set 9 does not exist");
}

TEST(EngineErrors, AfterShutdownHandlesFailWithAClearStatus) {
  Config config;
  Engine engine(config);
  engine.shutdown();
  std::vector<float> buf(4);
  auto h = engine.allreduce({"late", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice},
                            {ReduceOp::kSum});
  ASSERT_TRUE(h->done());
  EXPECT_EQ(h->status().code(), StatusCode::kAborted);
  EXPECT_NE(h->status().message().find("shut down"), std::string::npos);
}

}  // namespace
}  // namespace kolo::core
