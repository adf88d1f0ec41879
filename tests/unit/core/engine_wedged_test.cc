// Liveness of the engine's own thread: a rank whose background thread is
// stuck outside any wait (here in a completion callback that does not
// return) keeps heartbeating from its transport thread, so only its own
// watchdog (core/engine_liveness.h) can tell the peers; they must fail
// naming it within the bound, whatever the peer timeout.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "core/engine_liveness.h"
#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using namespace std::chrono_literals;
using testing::floats;
using testing::run_engines;
using testing::wait_for;
using Clock = std::chrono::steady_clock;

TEST(EngineLiveness, WaitingIsNeverWedgedWorkingTooLongIsNamedOnce) {
  std::atomic<int> calls{0};
  std::string reason;
  {
    EngineLiveness liveness(100ms, "rank 3 (host h)", [&](const std::string& r) {
      reason = r;
      ++calls;
    });
    liveness.waiting();
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(calls.load(), 0);
    {
      EngineLiveness::PeerWait waits(liveness);
      std::this_thread::sleep_for(300ms);
    }
    EXPECT_EQ(calls.load(), 0);  // a wait on the peers is not the engine's own code
    const auto deadline = Clock::now() + 5s;
    while (calls.load() == 0 && Clock::now() < deadline) std::this_thread::sleep_for(10ms);
    std::this_thread::sleep_for(300ms);
  }
  EXPECT_EQ(calls.load(), 1);
  EXPECT_NE(reason.find("rank 3 (host h) is wedged: its engine thread made no progress for"),
            std::string::npos)
      << reason;
}

TEST(EngineLiveness, AWedgedEngineThreadIsNamedOnEveryOtherRank) {
  testing::EngineRunOptions run;
  run.configure = [](Config& config) {
    config.engine.wedged_time = 1s;
    // Far beyond the test: the heartbeats must not be what names it.
    config.settings.set("KOLO_PEER_TIMEOUT_SECONDS", "60");
  };
  std::atomic<int> named{0};
  std::atomic<bool> armed{false};
  run_engines(
      3,
      [&](Engine& engine, int rank) {
        // "first" cannot complete before rank 1 has set its callback (or
        // the callback would run at once, on this thread).
        while (rank != 1 && !armed.load()) std::this_thread::sleep_for(1ms);
        std::vector<float> first(4, 1.0f);
        auto h = engine.allreduce(floats("first", first), {ReduceOp::kSum});
        if (rank == 1) {
          // Runs on rank 1's engine thread, which stays there until the
          // others have named it (bounded, so a failing test ends).
          h->on_complete([&](const Status&) {
            const auto deadline = Clock::now() + 20s;
            while (named.load() < 2 && Clock::now() < deadline) std::this_thread::sleep_for(10ms);
          });
          armed = true;
        } else {
          ASSERT_TRUE(wait_for(h).ok()) << h->status().ToString();
        }
        // Rank 1's program still submits; its engine never negotiates it.
        std::vector<float> second(4, 1.0f);
        const auto submitted = Clock::now();
        auto s = engine.allreduce(floats("second", second), {ReduceOp::kSum});
        Status status = wait_for(s, 15s);
        if (rank == 1) return;  // its own handles wait on the thread that is stuck
        const double seconds = std::chrono::duration<double>(Clock::now() - submitted).count();
        ++named;
        EXPECT_NE(status.message().find("rank 1 (host"), std::string::npos) << status.message();
        EXPECT_NE(status.message().find("is wedged"), std::string::npos) << status.message();
        // The 1 s bound, a quarter of it for the watchdog's period, the abort.
        EXPECT_LT(seconds, 4.0) << status.message();
      },
      run);
}

}  // namespace
}  // namespace kolo::core
