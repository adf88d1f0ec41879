// The stall inspector: a tensor some ranks never submit is reported with
// the ranks that are missing, and with a shutdown time each stalled
// operation fails on the ranks that submitted it, naming the others, while
// the engine goes on.
#include <gtest/gtest.h>

#include <mutex>
#include <thread>

#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using namespace std::chrono_literals;
using testing::run_engines;
using testing::wait_for;

struct Warnings {
  std::mutex mutex;
  std::vector<std::string> texts;
  void add(const std::string& text) {
    std::lock_guard lock(mutex);
    texts.push_back(text);
  }
};

testing::EngineRunOptions stall_run(Warnings& warnings, std::chrono::milliseconds warn,
                                    std::chrono::milliseconds shutdown) {
  testing::EngineRunOptions run;
  run.configure = [=](Config& c) {
    c.engine.stall_warning_time = warn;
    c.engine.stall_shutdown_time = shutdown;
  };
  run.engine_options = [&warnings](EngineOptions& o, int) {
    o.on_stall_warning = [&warnings](const std::string& text) { warnings.add(text); };
  };
  return run;
}

TEST(EngineStall, WarningNamesTheMissingRanksBeforeAndAfterCaching) {
  Warnings warnings;
  run_engines(
      3,
      [](Engine& engine, int rank) {
        for (int step = 0; step < 3; ++step) {
          // Step 0: 'x' is new (coordinator path); step 2: cached (fast
          // path). Rank 2 is late on both.
          if (rank == 2 && step != 1) std::this_thread::sleep_for(1500ms);
          std::vector<float> buf(4, 1.0f);
          auto h = engine.allreduce(
              {"x", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice}, {ReduceOp::kSum});
          ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
          EXPECT_EQ(buf[0], 3.0f);
        }
      },
      stall_run(warnings, 500ms, 0ms));
  ASSERT_GE(warnings.texts.size(), 2u);
  for (const auto& text : warnings.texts) {
    EXPECT_NE(text.find("'x'"), std::string::npos) << text;
    EXPECT_NE(text.find("missing from rank 2"), std::string::npos) << text;
    EXPECT_EQ(text.find("rank 0 ("), std::string::npos) << text;
    EXPECT_EQ(text.find("rank 1 ("), std::string::npos) << text;
  }
}

TEST(EngineStall, ShutdownTimeFailsTheStalledOperationsAndTheEngineGoesOn) {
  Warnings warnings;
  std::vector<std::string> errors(3);
  run_engines(
      3,
      [&](Engine& engine, int rank) {
        std::vector<float> buf(4, 1.0f);
        // Ranks 0 and 1 wait for 'y', rank 2 for 'z' (as if it had raised
        // and gone on to another collective): neither can run.
        auto h = engine.allreduce(
            {rank == 2 ? "z" : "y", buf.data(), buf.data(), DataType::kFloat32, {4}, kCpuDevice},
            {ReduceOp::kSum});
        Status status = wait_for(h, std::chrono::seconds(20));
        EXPECT_EQ(status.code(), StatusCode::kInvalidArgument) << status.ToString();
        errors[rank] = status.message();
        EXPECT_TRUE(engine.health().ok()) << engine.health().ToString();
        // The engine still runs: a collective every rank submits succeeds.
        std::vector<float> after(4, 1.0f);
        auto h2 = engine.allreduce(
            {"after", after.data(), after.data(), DataType::kFloat32, {4}, kCpuDevice},
            {ReduceOp::kSum});
        ASSERT_TRUE(wait_for(h2, std::chrono::seconds(20)).ok()) << h2->status().ToString();
        EXPECT_EQ(after[0], 3.0f);
      },
      stall_run(warnings, 300ms, 900ms));
  for (int rank = 0; rank < 2; ++rank) {
    EXPECT_NE(errors[rank].find("'y' (allreduce) was not submitted by rank 2"), std::string::npos)
        << errors[rank];
  }
  EXPECT_NE(errors[2].find("'z' (allreduce) was not submitted by rank 0"), std::string::npos)
      << errors[2];
  EXPECT_NE(errors[2].find("rank 1"), std::string::npos) << errors[2];
  EXPECT_FALSE(warnings.texts.empty());
}

}  // namespace
}  // namespace kolo::core
