// CommWatchdog's rules with a fake communicator (NCCL cannot run here): a
// healthy operation returns, an asynchronous error aborts the communicator
// and names the cause, an operation that never completes is aborted after
// the timeout, and an aborted communicator refuses later waits at once.
#include "gpu/comm_watchdog.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>

#include "common/error.h"

namespace kolo::gpu {
namespace {

using std::chrono::milliseconds;

class FakeCommunicator final : public WatchedCommunicator {
 public:
  std::optional<std::string> async_error() override {
    ++polls;
    if (error_after_polls >= 0 && polls > error_after_polls) return error;
    return std::nullopt;
  }
  void abort() override { ++aborts; }
  std::string describe() const override { return "NCCL communicator of process set 0"; }

  int polls = 0;
  int aborts = 0;
  int error_after_polls = -1;  // never
  std::string error = "unhandled system error: remote process exited";
};

WatchdogOptions fast(milliseconds timeout) {
  WatchdogOptions options;
  options.poll_interval = std::chrono::microseconds(100);
  options.timeout = timeout;
  return options;
}

TEST(CommWatchdog, ReturnsWhenTheOperationCompletes) {
  FakeCommunicator comm;
  CommWatchdog watchdog(comm, fast(milliseconds(5000)));
  int checks = 0;
  watchdog.wait([&] { return ++checks == 5; }, "allreduce of 'w'");
  EXPECT_EQ(checks, 5);
  EXPECT_EQ(comm.aborts, 0);
  EXPECT_FALSE(watchdog.aborted());
  // and again: a healthy communicator serves many operations
  watchdog.wait([] { return true; }, "broadcast of 'b'");
  EXPECT_EQ(comm.aborts, 0);
}

TEST(CommWatchdog, AnAsyncErrorAbortsAndNamesTheCause) {
  FakeCommunicator comm;
  comm.error_after_polls = 3;
  CommWatchdog watchdog(comm, fast(milliseconds(5000)));
  try {
    watchdog.wait([] { return false; }, "allreduce of 'grad.fc1.weight'");
    FAIL() << "expected IoError";
  } catch (const IoError& e) {
    EXPECT_EQ(std::string(e.what()),
              "allreduce of 'grad.fc1.weight' on the NCCL communicator of process set 0 "
              "failed: unhandled system error: remote process exited; the communicator was "
              "aborted");
  }
  EXPECT_EQ(comm.aborts, 1);
  EXPECT_TRUE(watchdog.aborted());
}

TEST(CommWatchdog, TheErrorWinsOverACompletedEvent) {
  // After a peer died the event may read as done; the error is the cause.
  FakeCommunicator comm;
  comm.error_after_polls = 0;
  CommWatchdog watchdog(comm, fast(milliseconds(5000)));
  EXPECT_THROW(watchdog.wait([] { return true; }, "allgather of 'x'"), IoError);
  EXPECT_EQ(comm.aborts, 1);
}

TEST(CommWatchdog, AStuckOperationIsAbortedAfterTheTimeout) {
  FakeCommunicator comm;
  CommWatchdog watchdog(comm, fast(milliseconds(100)));
  const auto start = std::chrono::steady_clock::now();
  try {
    watchdog.wait([] { return false; }, "allreduce of 'w'");
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("not done after 100 ms: a peer died or stopped"),
              std::string::npos)
        << e.what();
  }
  // Not before the timeout (the bound above it is the test's own limit).
  EXPECT_GE(std::chrono::steady_clock::now() - start, milliseconds(100));
  EXPECT_EQ(comm.aborts, 1);
  EXPECT_GT(comm.polls, 1);  // it kept checking the error while it waited
}

TEST(CommWatchdog, AnAbortedCommunicatorRefusesLaterWaitsAtOnce) {
  FakeCommunicator comm;
  CommWatchdog watchdog(comm, fast(milliseconds(20)));
  EXPECT_THROW(watchdog.wait([] { return false; }, "allreduce of 'a'"), TimeoutError);
  bool looked = false;
  try {
    watchdog.wait(
        [&] {
          looked = true;
          return true;
        },
        "allreduce of 'b'");
    FAIL() << "expected AbortedError";
  } catch (const AbortedError& e) {
    EXPECT_NE(std::string(e.what()).find("was aborted earlier (not done after 20 ms"),
              std::string::npos)
        << e.what();
  }
  EXPECT_FALSE(looked);
  EXPECT_EQ(comm.aborts, 1);  // never twice
}

TEST(CommWatchdog, APeerFailingWhileAnotherThreadWaits) {
  // The error arrives from elsewhere while the executor waits (as NCCL's
  // proxy thread sets it): the wait ends with it well before the timeout.
  class LateError final : public WatchedCommunicator {
   public:
    std::optional<std::string> async_error() override {
      if (failed.load()) return std::string("remote process exited or there was a network error");
      return std::nullopt;
    }
    void abort() override { ++aborts; }
    std::string describe() const override { return "NCCL communicator"; }
    std::atomic<bool> failed{false};
    std::atomic<int> aborts{0};
  } comm;
  CommWatchdog watchdog(comm, fast(milliseconds(30000)));
  std::thread peer([&] {
    std::this_thread::sleep_for(milliseconds(50));
    comm.failed = true;
  });
  EXPECT_THROW(watchdog.wait([] { return false; }, "allreduce of 'w'"), IoError);
  peer.join();
  EXPECT_EQ(comm.aborts.load(), 1);
}

}  // namespace
}  // namespace kolo::gpu
