// Adasum through the engine: negotiated like any allreduce, fused tensors
// each combined with their own coefficients, a disagreement on the op an
// error on every rank, and the calls Horovod refuses refused at once.
// The algorithm itself is checked against the formula in
// tests/unit/collectives/adasum_test.cc; here the inputs make the results
// exact (identical tensors are averaged, orthogonal ones added).
#include <gtest/gtest.h>

#include <string>

#include "common/error.h"
#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using testing::run_engines;
using testing::wait_for;

const Reduction kAdasum{ReduceOp::kAdasum};

TEST(EngineAdasum, FusedTensorsKeepTheirOwnCoefficients) {
  run_engines(4, [](Engine& engine, int rank) {
    // "same" is identical everywhere (Adasum gives it back), "apart" is
    // nonzero at one position per rank (Adasum adds them up). Submitted
    // together, they are fused into one operation.
    std::vector<float> same{1, 2, 3, 4, 5}, same_out(5);
    std::vector<float> apart(4, 0.0f), apart_out(4);
    apart[static_cast<size_t>(rank)] = 2.0f;
    auto h1 = engine.allreduce(
        {"same", same.data(), same_out.data(), DataType::kFloat32, {5}, kCpuDevice}, kAdasum);
    auto h2 = engine.allreduce(
        {"apart", apart.data(), apart_out.data(), DataType::kFloat32, {4}, kCpuDevice}, kAdasum);
    for (auto& h : {h1, h2}) ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
    EXPECT_EQ(same_out, same);
    EXPECT_EQ(apart_out, std::vector<float>(4, 2.0f));

    // A grouped allreduce, in place, with float64 and a postscale.
    std::vector<double> a{3, -1}, b(4, 0.0);
    b[static_cast<size_t>(rank)] = 1.0;
    auto hs =
        engine.grouped_allreduce({{"g.a", a.data(), a.data(), DataType::kFloat64, {2}, kCpuDevice},
                                  {"g.b", b.data(), b.data(), DataType::kFloat64, {4}, kCpuDevice}},
                                 {ReduceOp::kAdasum, 1.0, 0.5});
    for (auto& h : hs) ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
    EXPECT_EQ(a, (std::vector<double>{1.5, -0.5}));
    EXPECT_EQ(b, std::vector<double>(4, 0.5));
  });
}

TEST(EngineAdasum, OpMismatchFailsOnEveryRank) {
  std::vector<std::string> errors(2);
  run_engines(2, [&](Engine& engine, int rank) {
    std::vector<float> in(3, 1.0f), out(3);
    auto h = engine.allreduce({"w", in.data(), out.data(), DataType::kFloat32, {3}, kCpuDevice},
                              rank == 0 ? kAdasum : Reduction{ReduceOp::kSum});
    Status status = wait_for(h);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    errors[rank] = status.message();
  });
  EXPECT_EQ(errors[0], errors[1]);
  for (const char* part : {"'w'", "adasum", "sum"})
    EXPECT_NE(errors[0].find(part), std::string::npos) << part << " not in " << errors[0];
}

void expect_refused(const std::function<void()>& call, const std::string& part) {
  try {
    call();
    ADD_FAILURE() << "accepted; expected an error containing '" << part << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

TEST(EngineAdasum, RefusedWhereHorovodRefusesIt) {
  run_engines(3, [](Engine& engine, int) {
    std::vector<float> f(6, 1.0f);
    std::vector<int32_t> i(6, 1);
    expect_refused(
        [&] {
          engine.allreduce({"three", f.data(), f.data(), DataType::kFloat32, {6}, kCpuDevice},
                           kAdasum);
        },
        "Adasum needs a power-of-two number of ranks, as in Horovod; the process set has 3");
    expect_refused(
        [&] {
          engine.allreduce({"int", i.data(), i.data(), DataType::kInt32, {6}, kCpuDevice}, kAdasum);
        },
        "reduce op adasum is not defined for int32");
    expect_refused(
        [&] {
          engine.reducescatter({"rs", f.data(), nullptr, DataType::kFloat32, {6}, kCpuDevice},
                               kAdasum);
        },
        "Adasum is defined for allreduce only");
  });
}

}  // namespace
}  // namespace kolo::core
