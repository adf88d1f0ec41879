// Real processes over TCP: a rank that dies (SIGKILL) or stops answering
// (SIGSTOP) mid-allreduce must make every other rank fail with an error that
// names it, within the configured timeout — never hang.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>

#include "rendezvous/store_auth.h"
#include "rendezvous/tcp_store_server.h"
#include "support/child_process.h"

namespace kolo {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;

class PeerFailureTest : public ::testing::Test {
 protected:
  void start_ranks(int size, const std::string& op_timeout_seconds,
                   const std::map<std::string, std::string>& extra = {}) {
    secret_ = rendezvous::generate_secret();
    rendezvous::TcpStoreServerOptions options;
    options.bind_address = "127.0.0.1";
    options.secret = secret_;
    server_ = std::make_unique<rendezvous::TcpStoreServer>(options);
    for (int r = 0; r < size; ++r) {
      std::map<std::string, std::string> env = {
          {"KOLO_RANK", std::to_string(r)},
          {"KOLO_SIZE", std::to_string(size)},
          {"KOLO_RENDEZVOUS_ADDR", "127.0.0.1"},
          {"KOLO_RENDEZVOUS_PORT", std::to_string(server_->port())},
          {"KOLO_SECRET", secret_},
          {"KOLO_TIMEOUT_SECONDS", op_timeout_seconds},
          {"KOLO_START_TIMEOUT", "30"},
          {"KOLO_TEST_COUNT", "262144"},
      };
      for (const auto& [k, v] : extra) env[k] = v;
      // Per test: a file left by an earlier test of this process would
      // show its "iteration 3 ok" before this rank has started.
      std::string test = ::testing::UnitTest::GetInstance()->current_test_info()->name();
      std::replace(test.begin(), test.end(), '/', '_');  // parameterized: "Finish/0"
      std::string prefix = ::testing::TempDir() + "/peer_failure_" + std::to_string(::getpid()) +
                           "_" + test + "_rank" + std::to_string(r);
      ranks_.push_back(std::make_unique<ChildProcess>(
          std::vector<std::string>{KOLO_BIN_DIR "/collective_worker"}, env, prefix));
    }
  }

  // Waits until every rank has completed a few allreduces, so the failure
  // hits an operation in flight rather than the set-up.
  void wait_until_running() {
    auto deadline = std::chrono::steady_clock::now() + 30s;
    for (auto& rank : ranks_) {
      while (rank->stdout_text().find("iteration 3 ok") == std::string::npos) {
        ASSERT_TRUE(rank->running()) << "rank exited early: " << rank->stderr_text();
        ASSERT_LT(std::chrono::steady_clock::now(), deadline) << "ranks never started working";
        std::this_thread::sleep_for(20ms);
      }
    }
  }

  void expect_survivors_fail(int victim, std::chrono::milliseconds limit,
                             const std::string& must_mention) {
    auto start = std::chrono::steady_clock::now();
    for (int r = 0; r < static_cast<int>(ranks_.size()); ++r) {
      if (r == victim) continue;
      auto status = ranks_[r]->wait_for(limit);
      ASSERT_TRUE(status.has_value()) << "rank " << r << " still running " << limit.count()
                                      << " ms after rank " << victim << " failed\n"
                                      << ranks_[r]->stdout_text() << ranks_[r]->stderr_text();
      EXPECT_EQ(status->code, 3) << "rank " << r << " " << status->describe() << "\n"
                                 << ranks_[r]->stderr_text();
      std::string err = ranks_[r]->stderr_text();
      EXPECT_NE(err.find(must_mention), std::string::npos)
          << "rank " << r << "'s error does not name the failed rank:\n"
          << err;
    }
    auto took = std::chrono::steady_clock::now() - start;
    RecordProperty(
        "survivors_failed_ms",
        static_cast<int>(std::chrono::duration_cast<std::chrono::milliseconds>(took).count()));
  }

  std::string secret_;
  std::unique_ptr<rendezvous::TcpStoreServer> server_;
  std::vector<std::unique_ptr<ChildProcess>> ranks_;
};

TEST_F(PeerFailureTest, KilledRankFailsEverySurvivorNamingIt) {
  start_ranks(4, "20");
  wait_until_running();
  ranks_[2]->signal(SIGKILL);
  // A lost connection is noticed at once; well inside the 20 s op timeout.
  expect_survivors_fail(2, 10s, "rank 2 (host");
}

TEST_F(PeerFailureTest, StoppedRankFailsEverySurvivorWithinTheTimeout) {
  // Heartbeats stop with the process: after 2 s of silence every rank that
  // hears nothing from rank 1 names it, long before the 60 s op timeout
  // could blame whichever healthy peer a survivor happened to wait on.
  start_ranks(3, "60", {{"KOLO_PEER_TIMEOUT_SECONDS", "2"}});
  wait_until_running();
  ranks_[1]->signal(SIGSTOP);
  expect_survivors_fail(1, 15s, "rank 1 (host");
  ranks_[1]->signal(SIGKILL);
}

TEST_F(PeerFailureTest, EngineRankKilledMidStepFailsSurvivorsWithRankHostAndTensor) {
  start_ranks(3, "20", {{"KOLO_TEST_MODE", "engine"}});
  wait_until_running();
  ranks_[1]->signal(SIGKILL);
  expect_survivors_fail(1, 10s, "rank 1 (host");
  for (int r : {0, 2}) {
    std::string err = ranks_[r]->stderr_text();
    // Killed during a collective or a negotiation with tensors pending, the
    // message names them; killed between steps, it names the negotiation.
    bool names_context = err.find("'grad.fc1.") != std::string::npos ||
                         err.find("(during negotiation in process set 0)") != std::string::npos;
    EXPECT_TRUE(names_context) << err;
    EXPECT_NE(err.find("later operation failed with the same root cause"), std::string::npos)
        << err;
  }
}

TEST_F(PeerFailureTest, EngineRankStoppedFailsSurvivorsWithinThePeerTimeout) {
  start_ranks(3, "60", {{"KOLO_TEST_MODE", "engine"}, {"KOLO_PEER_TIMEOUT_SECONDS", "2"}});
  wait_until_running();
  ranks_[2]->signal(SIGSTOP);
  expect_survivors_fail(2, 15s, "rank 2 (host");
  ranks_[2]->signal(SIGKILL);
}

TEST_F(PeerFailureTest, EngineRankStoppedFailsSurvivorsWithinTheStallShutdownTime) {
  // The peer timeout alone would take 10 minutes: the stall inspector's
  // shutdown time applies to a frozen rank too, which answers no
  // negotiation and so is never seen as a stalled tensor.
  start_ranks(3, "900",
              {{"KOLO_TEST_MODE", "engine"},
               {"KOLO_PEER_TIMEOUT_SECONDS", "600"},
               {"KOLO_STALL_CHECK_TIME_SECONDS", "1"},
               {"KOLO_STALL_SHUTDOWN_TIME_SECONDS", "2"}});
  wait_until_running();
  ranks_[2]->signal(SIGSTOP);
  expect_survivors_fail(2, 15s, "rank 2 (host");
  ranks_[2]->signal(SIGKILL);
}

TEST_F(PeerFailureTest, WorkerWithTheWrongSecretIsRejectedWithAClearMessage) {
  start_ranks(2, "20", {{"KOLO_SECRET", "not-the-job-secret"}, {"KOLO_TEST_ITERATIONS", "1"}});
  for (auto& rank : ranks_) {
    auto status = rank->wait_for(30s);
    ASSERT_TRUE(status.has_value()) << "rank with a wrong secret still running after 30 s";
    EXPECT_EQ(status->code, 3) << status->describe() << "\n" << rank->stderr_text();
    EXPECT_NE(rank->stderr_text().find("rejected our credentials"), std::string::npos)
        << rank->stderr_text();
  }
}

class HealthyRanks : public PeerFailureTest, public ::testing::WithParamInterface<const char*> {};

TEST_P(HealthyRanks, Finish) {
  start_ranks(3, "20", {{"KOLO_TEST_ITERATIONS", "5"}, {"KOLO_TEST_MODE", GetParam()}});
  for (auto& rank : ranks_) {
    auto status = rank->wait_for(30s);
    ASSERT_TRUE(status.has_value()) << "rank still running after 30 s";
    EXPECT_TRUE(status->ok()) << status->describe() << "\n" << rank->stderr_text();
    EXPECT_NE(rank->stdout_text().find("iteration 5 ok"), std::string::npos);
  }
}

INSTANTIATE_TEST_SUITE_P(CollectivesAndEngine, HealthyRanks,
                         ::testing::Values("collectives", "engine"));

}  // namespace
}  // namespace kolo
