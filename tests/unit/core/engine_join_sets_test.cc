// Join (uneven data: a rank that ran out contributes zeros) and process
// sets (given at init, added and removed at run time).
#include <gtest/gtest.h>

#include "common/error.h"
#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using testing::run_engines;
using testing::wait_for;

using testing::floats;

TEST(EngineJoin, JoinedRanksContributeZerosAndJoinReturnsTheLastRank) {
  run_engines(3, [](Engine& engine, int rank) {
    // Rank r runs r+1 steps, then joins; rank 2 joins last.
    for (int step = 0; step <= rank; ++step) {
      std::vector<float> buf(6, static_cast<float>(rank + 1));
      auto h = engine.allreduce(floats("grad", buf), {ReduceOp::kAverage});
      ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
      // Ranks still stepping contribute rank+1; joined ones zeros; the
      // average divides by all 3 ranks.
      float expected = 0;
      for (int r = step; r < 3; ++r) expected += static_cast<float>(r + 1);
      EXPECT_FLOAT_EQ(buf[5], expected / 3.0f) << "rank " << rank << " step " << step;
    }
    auto j = engine.join();
    ASSERT_TRUE(wait_for(j).ok()) << j->status().ToString();
    EXPECT_EQ(j->result().value, 2);
    // Everyone is back: ordinary collectives work again (and are cached).
    for (int i = 0; i < 2; ++i) {
      std::vector<float> buf(2, 1.0f);
      auto h = engine.allreduce(floats("after", buf), {ReduceOp::kSum});
      ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
      EXPECT_EQ(buf[0], 3.0f);
    }
  });
}

TEST(EngineJoin, NonAllreduceWhileARankHasJoinedFailsOnEveryRank) {
  run_engines(2, [](Engine& engine, int rank) {
    const std::string expected =
        "allgather of tensor 'gathered' cannot run while rank 1 has joined: only allreduce runs "
        "with joined ranks";
    if (rank == 1) {
      // The joined rank submitted nothing for the allgather; its join()
      // carries the same error, not a later "shut down".
      auto j = engine.join();
      Status status = wait_for(j);
      EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
      EXPECT_EQ(status.message(), expected);
      // It was released: it joins again like any rank.
      j = engine.join();
      ASSERT_TRUE(wait_for(j).ok()) << j->status().ToString();
      EXPECT_LE(j->result().value, 1);  // whichever rank joined last
      return;
    }
    std::vector<float> buf(4, 1.0f);
    auto g =
        engine.allgather({"gathered", buf.data(), nullptr, DataType::kFloat32, {4}, kCpuDevice});
    Status status = wait_for(g);
    EXPECT_EQ(status.code(), StatusCode::kInvalidArgument);
    EXPECT_EQ(status.message(), expected);
    auto j = engine.join();
    ASSERT_TRUE(wait_for(j).ok()) << j->status().ToString();
    EXPECT_LE(j->result().value, 1);
  });
}

TEST(EngineProcessSets, SetsGivenAtInitNegotiateOnTheirOwn) {
  testing::EngineRunOptions run;
  run.engine_options = [](EngineOptions& o, int) { o.process_sets = {{0, 2}, {1, 3}}; };
  run_engines(
      4,
      [](Engine& engine, int rank) {
        EXPECT_EQ(engine.process_set_ids(), (std::vector<int32_t>{0, 1, 2}));
        int32_t mine = rank % 2 == 0 ? 1 : 2;
        int32_t other = rank % 2 == 0 ? 2 : 1;
        EXPECT_EQ(engine.process_set_ranks(mine),
                  rank % 2 == 0 ? (std::vector<int>{0, 2}) : (std::vector<int>{1, 3}));
        // The same name in both sets does not mix.
        std::vector<float> buf(3, static_cast<float>(rank));
        auto h = engine.allreduce(floats("x", buf), {ReduceOp::kSum}, mine);
        ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
        EXPECT_EQ(buf[0], rank % 2 == 0 ? 2.0f : 4.0f);
        try {
          engine.allreduce(floats("y", buf), {ReduceOp::kSum}, other);
          ADD_FAILURE() << "a set this rank is not in was accepted";
        } catch (const InvalidArgument& e) {
          EXPECT_NE(std::string(e.what()).find("not a member of process set"), std::string::npos)
              << e.what();
        }
      },
      run);
}

TEST(EngineProcessSets, AddedAndRemovedAtRunTime) {
  run_engines(3, [](Engine& engine, int rank) {
    auto add = engine.add_process_set({2, 0});
    ASSERT_TRUE(wait_for(add).ok()) << add->status().ToString();
    auto id = static_cast<int32_t>(add->result().value);
    EXPECT_EQ(id, 1);
    EXPECT_EQ(engine.process_set_ranks(id), (std::vector<int>{0, 2}));
    if (rank != 1) {
      std::vector<float> buf(2, static_cast<float>(rank + 1));
      for (int step = 0; step < 3; ++step) {
        std::fill(buf.begin(), buf.end(), static_cast<float>(rank + 1));
        auto h = engine.allreduce(floats("sub", buf), {ReduceOp::kSum}, id);
        ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
        EXPECT_EQ(buf[1], 4.0f);
      }
    }
    auto remove = engine.remove_process_set(id);
    ASSERT_TRUE(wait_for(remove).ok()) << remove->status().ToString();
    EXPECT_EQ(engine.process_set_ids(), (std::vector<int32_t>{0}));
  });
}

TEST(EngineProcessSets, DifferentSetsAtInitAreRefused) {
  auto store = std::make_shared<rendezvous::MemoryStore>();
  std::vector<std::string> errors(2);
  testing::run_threads(2, [&](int rank) {
    Config config = testing::engine_config(rank, 2);
    EngineOptions options;
    options.store = store;
    options.process_sets = {rank == 0 ? std::vector<int>{0} : std::vector<int>{0, 1}};
    try {
      Engine engine(config, options);
    } catch (const InvalidArgument& e) {
      errors[rank] = e.what();
    }
  });
  for (const auto& e : errors) EXPECT_NE(e.find("differ between ranks"), std::string::npos) << e;
}

}  // namespace
}  // namespace kolo::core
