// The public C++ API (include/kolo/engine.h): kolo::Engine and kolo::Handle
// over the core engine, on one rank from the environment and on 2-3 ranks
// as threads (built through internal::EngineAccess with a shared store).
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>
#include <future>
#include <optional>
#include <string>
#include <vector>

#include "core/public_engine_internal.h"
#include "kolo/engine.h"
#include "public_ranks.h"
#include "support/engine_ranks.h"

namespace kolo {
namespace {

using internal::EngineAccess;
using namespace std::chrono_literals;

using testing::run_public;

// Bounded wait, so a broken engine fails the test instead of hanging it.
Status await(const Handle& handle) {
  if (!handle.wait(30s)) return Status(StatusCode::kTimeout, "handle did not complete in 30 s");
  return handle.status();
}

template <class T>
Tensor tensor_of(const std::vector<T>& values, DataType dtype, std::vector<int64_t> shape = {}) {
  if (shape.empty()) shape = {static_cast<int64_t>(values.size())};
  return Tensor{values.data(), dtype, std::move(shape)};
}

template <class T>
std::vector<T> output_of(const Handle& handle) {
  const T* data = static_cast<const T*>(handle.data());
  if (data == nullptr) return {};
  return std::vector<T>(data, data + handle.nbytes() / sizeof(T));
}

// Expects `body` to throw kolo::Exception with `code` and text containing `needle`.
template <class Body>
void expect_exception(Body&& body, StatusCode code, const std::string& needle) {
  try {
    body();
    ADD_FAILURE() << "no exception; expected one containing '" << needle << "'";
  } catch (const Exception& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos) << e.what();
  }
}

TEST(PublicApi, InitShutdownInitThreeTimesFromEnvironment) {
  for (int round = 0; round < 3; ++round) {
    Engine engine;
    EXPECT_EQ(engine.rank(), 0);
    EXPECT_EQ(engine.size(), 1);
    EXPECT_EQ(engine.local_rank(), 0);
    EXPECT_EQ(engine.local_size(), 1);
    EXPECT_EQ(engine.cross_rank(), 0);
    EXPECT_EQ(engine.cross_size(), 1);
    std::vector<float> in{1.0f + static_cast<float>(round), 2}, out(2);
    Handle h = engine.allreduce(tensor_of(in, DataType::kFloat32), out.data(),
                                {.op = ReduceOp::kSum, .name = "x"});
    ASSERT_TRUE(await(h).ok()) << h.error();
    EXPECT_EQ(out, in);
    engine.shutdown();
    engine.shutdown();  // idempotent
    Handle late = engine.allreduce(tensor_of(in, DataType::kFloat32), out.data());
    ASSERT_TRUE(late.wait(5s));
    EXPECT_EQ(late.status().code(), StatusCode::kAborted);
    EXPECT_NE(late.error().find("shut down"), std::string::npos) << late.error();
  }
}

TEST(PublicApi, InitShutdownInitThreeTimesOnTwoRanks) {
  auto store = std::make_shared<rendezvous::MemoryStore>();
  for (int round = 0; round < 3; ++round) {
    run_public(
        2,
        [round](Engine& engine, int rank) {
          EXPECT_EQ(engine.size(), 2);
          std::vector<int32_t> v{rank + round};
          Handle h =
              engine.allreduce(tensor_of(v, DataType::kInt32), v.data(), {.op = ReduceOp::kSum});
          ASSERT_TRUE(await(h).ok()) << h.error();
          EXPECT_EQ(v[0], 1 + 2 * round);
        },
        store);
  }
}

class PublicCollectives : public ::testing::TestWithParam<int> {};

TEST_P(PublicCollectives, ReduceOperations) {
  const int n = GetParam();
  run_public(n, [n](Engine& engine, int rank) {
    std::vector<float> in(5, static_cast<float>(rank + 1)), sum(5), scaled(5);
    Handle h1 = engine.allreduce(tensor_of(in, DataType::kFloat32), sum.data(),
                                 {.op = ReduceOp::kSum, .name = "sum"});
    Handle h2 = engine.allreduce(
        tensor_of(in, DataType::kFloat32), scaled.data(),
        {.op = ReduceOp::kAverage, .prescale = 2.0, .postscale = 3.0, .name = "avg"});
    std::vector<int32_t> in_place{rank * 7, -rank};
    Handle h3 = engine.allreduce(tensor_of(in_place, DataType::kInt32), in_place.data(),
                                 {.op = ReduceOp::kMin, .name = "min"});
    ASSERT_TRUE(await(h1).ok()) << h1.error();
    ASSERT_TRUE(await(h2).ok()) << h2.error();
    ASSERT_TRUE(await(h3).ok()) << h3.error();
    const float total = static_cast<float>(n * (n + 1) / 2);
    EXPECT_EQ(sum, std::vector<float>(5, total));
    EXPECT_FLOAT_EQ(scaled[4], total / static_cast<float>(n) * 6.0f);
    EXPECT_EQ(in_place, (std::vector<int32_t>{0, -(n - 1)}));

    // Grouped: three tensors of different sizes, negotiated as one.
    std::vector<std::vector<double>> ins, outs;
    for (int i = 0; i < 3; ++i) {
      ins.emplace_back(static_cast<size_t>(i + 1), rank * 10.0 + i);
      outs.emplace_back(static_cast<size_t>(i + 1));
    }
    std::vector<Tensor> inputs;
    std::vector<void*> outputs;
    for (int i = 0; i < 3; ++i) {
      inputs.push_back(tensor_of(ins[i], DataType::kFloat64));
      outputs.push_back(outs[i].data());
    }
    auto group = engine.grouped_allreduce(inputs, outputs, {.op = ReduceOp::kMax, .name = "group"});
    ASSERT_EQ(group.size(), 3u);
    for (int i = 0; i < 3; ++i) {
      ASSERT_TRUE(await(group[i]).ok()) << group[i].error();
      EXPECT_EQ(outs[i], std::vector<double>(static_cast<size_t>(i + 1), (n - 1) * 10.0 + i));
    }

    // Reducescatter of 7 rows of 2: rank r gets 7/n rows (+1 for r < 7%n).
    std::vector<float> rows(14);
    for (int i = 0; i < 14; ++i) rows[i] = static_cast<float>((rank + 1) * i);
    Handle rs = engine.reducescatter(tensor_of(rows, DataType::kFloat32, {7, 2}),
                                     {.op = ReduceOp::kSum, .name = "rs"});
    auto grs = engine.grouped_reducescatter(
        {tensor_of(rows, DataType::kFloat32, {7, 2}), tensor_of(in, DataType::kFloat32)},
        {.op = ReduceOp::kSum, .name = "grs"});
    ASSERT_TRUE(await(rs).ok()) << rs.error();
    int64_t mine = 7 / n + (rank < 7 % n ? 1 : 0);
    int64_t first = 0;
    for (int r = 0; r < rank; ++r) first += 7 / n + (r < 7 % n ? 1 : 0);
    EXPECT_EQ(rs.shape(), (std::vector<int64_t>{mine, 2}));
    std::vector<float> expected;
    for (int64_t i = first * 2; i < (first + mine) * 2; ++i)
      expected.push_back(total * static_cast<float>(i));
    EXPECT_EQ(output_of<float>(rs), expected);
    ASSERT_EQ(grs.size(), 2u);
    ASSERT_TRUE(await(grs[0]).ok()) << grs[0].error();
    ASSERT_TRUE(await(grs[1]).ok()) << grs[1].error();
    EXPECT_EQ(output_of<float>(grs[0]), expected);
    EXPECT_EQ(output_of<float>(grs[1]),
              std::vector<float>(static_cast<size_t>(5 / n + (rank < 5 % n ? 1 : 0)), total));
  });
}

TEST_P(PublicCollectives, GatherBroadcastAlltoall) {
  const int n = GetParam();
  run_public(n, [n](Engine& engine, int rank) {
    // Allgather: rank r contributes r+1 rows of 2 values r*100 + j.
    std::vector<int64_t> mine;
    for (int j = 0; j < 2 * (rank + 1); ++j) mine.push_back(rank * 100 + j);
    Handle ag = engine.allgather(tensor_of(mine, DataType::kInt64, {rank + 1, 2}), {.name = "ag"});
    auto gag = engine.grouped_allgather({tensor_of(mine, DataType::kInt64, {rank + 1, 2}),
                                         tensor_of(mine, DataType::kInt64, {2 * (rank + 1)})},
                                        {.name = "gag"});
    ASSERT_TRUE(await(ag).ok()) << ag.error();
    std::vector<int64_t> gathered;
    for (int r = 0; r < n; ++r) {
      for (int j = 0; j < 2 * (r + 1); ++j) gathered.push_back(r * 100 + j);
    }
    EXPECT_EQ(ag.shape(), (std::vector<int64_t>{n * (n + 1) / 2, 2}));
    EXPECT_EQ(output_of<int64_t>(ag), gathered);
    ASSERT_EQ(gag.size(), 2u);
    ASSERT_TRUE(await(gag[0]).ok()) << gag[0].error();
    ASSERT_TRUE(await(gag[1]).ok()) << gag[1].error();
    EXPECT_EQ(output_of<int64_t>(gag[0]), gathered);
    EXPECT_EQ(gag[1].shape(), (std::vector<int64_t>{n * (n + 1)}));

    // Broadcast from the last rank into a separate output.
    std::vector<float> data(3, static_cast<float>(rank)), out(3, -1);
    Handle bc = engine.broadcast(tensor_of(data, DataType::kFloat32), out.data(),
                                 {.root = n - 1, .name = "bc"});
    ASSERT_TRUE(await(bc).ok()) << bc.error();
    EXPECT_EQ(out, std::vector<float>(3, static_cast<float>(n - 1)));

    // Alltoall: d+1 values s*100 + d from each sender s to each rank d.
    std::vector<int32_t> send;
    std::vector<int64_t> splits;
    for (int d = 0; d < n; ++d) {
      splits.push_back(d + 1);
      for (int k = 0; k <= d; ++k) send.push_back(rank * 100 + d);
    }
    Handle a2a =
        engine.alltoall(tensor_of(send, DataType::kInt32), {.splits = splits, .name = "a2a"});
    ASSERT_TRUE(await(a2a).ok()) << a2a.error();
    std::vector<int32_t> received;
    for (int s = 0; s < n; ++s) {
      for (int k = 0; k <= rank; ++k) received.push_back(s * 100 + rank);
    }
    EXPECT_EQ(output_of<int32_t>(a2a), received);
    EXPECT_EQ(a2a.received_splits(), std::vector<int64_t>(static_cast<size_t>(n), rank + 1));
    EXPECT_EQ(a2a.shape(), (std::vector<int64_t>{n * (rank + 1)}));
  });
}

TEST_P(PublicCollectives, BarrierJoinAndProcessSets) {
  const int n = GetParam();
  std::vector<int64_t> last_joined(static_cast<size_t>(n), -2);
  run_public(n, [n, &last_joined](Engine& engine, int rank) {
    Handle b = engine.barrier();
    ASSERT_TRUE(await(b).ok()) << b.error();
    Handle j = engine.join();
    ASSERT_TRUE(await(j).ok()) << j.error();
    last_joined[rank] = j.value();

    Handle add = engine.add_process_set({0, n - 1});
    ASSERT_TRUE(await(add).ok()) << add.error();
    auto id = static_cast<int32_t>(add.value());
    EXPECT_GE(id, 1);
    std::vector<float> v{static_cast<float>(rank)};
    if (rank == 0 || rank == n - 1) {
      Handle h = engine.allreduce(tensor_of(v, DataType::kFloat32), v.data(),
                                  {.op = ReduceOp::kSum, .name = "in_set", .process_set = id});
      ASSERT_TRUE(await(h).ok()) << h.error();
      EXPECT_EQ(v[0], static_cast<float>(n - 1));
    } else {
      expect_exception(
          [&] {
            engine.allreduce(tensor_of(v, DataType::kFloat32), v.data(), {.process_set = id});
          },
          StatusCode::kInvalidArgument, "not a member");
    }
    Handle remove = engine.remove_process_set(id);
    ASSERT_TRUE(await(remove).ok()) << remove.error();
    expect_exception(
        [&] { engine.allreduce(tensor_of(v, DataType::kFloat32), v.data(), {.process_set = id}); },
        StatusCode::kInvalidArgument, "does not exist");
    // A rank that finished shuts the job down for all, and a stopped engine
    // answers every enqueue with an aborted handle instead of validating
    // it: keep everyone running until all ranks made the check above.
    Handle done = engine.barrier();
    ASSERT_TRUE(await(done).ok()) << done.error();
  });
  for (int r = 0; r < n; ++r) {
    EXPECT_GE(last_joined[r], 0);
    EXPECT_EQ(last_joined[r], last_joined[0]) << "join must report the same last rank everywhere";
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, PublicCollectives, ::testing::Values(2, 3),
                         ::testing::PrintToStringParamName());

TEST(PublicApi, WaitTimesOutWhileAPeerHasNotSubmitted) {
  std::promise<void> checked;
  std::shared_future<void> rank0_checked = checked.get_future().share();
  run_public(2, [&](Engine& engine, int rank) {
    std::vector<float> v{static_cast<float>(rank + 1)};
    if (rank == 1) rank0_checked.wait();  // rank 0 first sees its handle stuck
    Handle h = engine.allreduce(tensor_of(v, DataType::kFloat32), v.data(),
                                {.op = ReduceOp::kSum, .name = "late"});
    if (rank == 0) {
      auto start = std::chrono::steady_clock::now();
      EXPECT_FALSE(h.wait(150ms));
      auto waited = std::chrono::steady_clock::now() - start;
      EXPECT_GE(waited, 150ms);
      EXPECT_LT(waited, 10s);
      EXPECT_FALSE(h.isCompleted());
      EXPECT_EQ(h.error(), "");
      EXPECT_EQ(h.data(), nullptr);
      EXPECT_EQ(h.value(), -1);
      expect_exception([&] { (void)h.status(); }, StatusCode::kInvalidArgument, "still running");
      // Reusing the name while it is in flight is refused at once.
      expect_exception(
          [&] {
            engine.allreduce(tensor_of(v, DataType::kFloat32), v.data(),
                             {.op = ReduceOp::kSum, .name = "late"});
          },
          StatusCode::kInvalidArgument, "already in use");
      checked.set_value();
    }
    ASSERT_TRUE(await(h).ok()) << h.error();
    EXPECT_TRUE(h.isCompleted());
    EXPECT_EQ(v[0], 3.0f);
  });
}

TEST(PublicApi, MismatchFailsTheHandleOnEveryRankWithTheSameText) {
  std::vector<std::string> errors(2);
  run_public(2, [&](Engine& engine, int rank) {
    std::vector<float> v(static_cast<size_t>(rank + 2));
    Handle h = engine.allreduce(tensor_of(v, DataType::kFloat32), v.data(), {.name = "mismatch"});
    Status status = await(h);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
    errors[rank] = h.error();
  });
  EXPECT_NE(errors[0].find("mismatch"), std::string::npos) << errors[0];
  EXPECT_EQ(errors[0], errors[1]);
}

TEST(PublicApi, BadArgumentsThrowWithCodeAndText) {
  Engine engine = EngineAccess::create(Config{});
  std::vector<float> f{1, 2};
  std::vector<float> out(2);
  expect_exception(
      [&] {
        engine.allreduce(tensor_of(f, DataType::kFloat32), out.data(), {.op = ReduceOp::kBitAnd});
      },
      StatusCode::kInvalidArgument, "band is not defined for float32");
  expect_exception(
      [&] { engine.allreduce(tensor_of(f, DataType::kFloat32), out.data(), {.process_set = 7}); },
      StatusCode::kInvalidArgument, "process set 7 does not exist");
  expect_exception(
      [&] { engine.broadcast(tensor_of(f, DataType::kFloat32), out.data(), {.root = 3}); },
      StatusCode::kInvalidArgument, "root rank 3");
  expect_exception([&] { engine.alltoall(tensor_of(f, DataType::kFloat32), {.splits = {5}}); },
                   StatusCode::kInvalidArgument, "add up to 5");
  expect_exception(
      [&] { engine.grouped_allreduce({tensor_of(f, DataType::kFloat32)}, {}, {.name = "g"}); },
      StatusCode::kInvalidArgument, "1 inputs but 0 outputs");
  expect_exception([&] { engine.remove_process_set(0); }, StatusCode::kInvalidArgument,
                   "cannot be removed");
  expect_exception(
      [&] {
        engine.allreduce(Tensor{nullptr, DataType::kFloat32, {2}}, out.data());
      },
      StatusCode::kInvalidArgument, "input pointer is null");
  // The engine still works after refusing all that.
  Handle h = engine.allreduce(tensor_of(f, DataType::kFloat32), out.data(), {.op = ReduceOp::kSum});
  ASSERT_TRUE(await(h).ok()) << h.error();
  EXPECT_EQ(out, f);
}

TEST(PublicApi, EmptyHandleAndMovedFromEngineThrow) {
  Handle empty;
  EXPECT_FALSE(empty.valid());
  expect_exception([&] { (void)empty.isCompleted(); }, StatusCode::kInvalidArgument, "empty");
  expect_exception([&] { (void)empty.wait(1ms); }, StatusCode::kInvalidArgument, "empty");

  Engine engine = EngineAccess::create(Config{});
  Engine moved = std::move(engine);
  EXPECT_EQ(moved.size(), 1);
  expect_exception(
      [&] { (void)engine.rank(); },  // NOLINT(bugprone-use-after-move): the point of the test
      StatusCode::kInvalidArgument, "moved from");
  Handle b = moved.barrier();
  ASSERT_TRUE(await(b).ok()) << b.error();
  Handle copy = b;  // copies share the operation
  EXPECT_TRUE(copy.isCompleted());
}

TEST(PublicApi, TimelineStartsAndStopsAtRunTime) {
  auto path = std::filesystem::path(::testing::TempDir()) / "capi-public-timeline.json";
  std::filesystem::remove(path);
  Engine engine = EngineAccess::create(Config{});
  engine.start_timeline(path.string(), true);
  std::vector<float> v{1};
  Handle h = engine.allreduce(tensor_of(v, DataType::kFloat32), v.data(), {.name = "traced"});
  ASSERT_TRUE(await(h).ok()) << h.error();
  engine.stop_timeline();
  engine.shutdown();
  ASSERT_TRUE(std::filesystem::exists(path));
  EXPECT_GT(std::filesystem::file_size(path), 0u);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace kolo
