// Failures must reach every rank quickly with the root cause, never hang.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <latch>
#include <string>
#include <thread>

#include "common/error.h"
#include "support/tcp_mesh.h"

namespace kolo::transport {
namespace {

using namespace std::chrono_literals;
using kolo::testing::loopback_tcp_options;
using kolo::testing::make_tcp_mesh;
using kolo::testing::run_threads;
using Clock = std::chrono::steady_clock;

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Runs `op` and returns the message of the kolo::Error it throws, checking
// its type; fails the test if it does not throw.
template <typename ErrorType, typename Fn>
std::string error_of(Fn&& op) {
  try {
    op();
  } catch (const ErrorType& e) {
    return e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "unexpected exception type: " << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no exception";
  return "";
}

// Rank 0's context is destroyed while ranks 1 and 2 wait on it: they fail
// within about a second naming rank 0 and its host, and stay failed.
TEST(TcpFailure, DestroyedPeerFailsPendingAndLaterOperations) {
  auto mesh = make_tcp_mesh(3);
  const std::string lost = "rank 0 (host " + host_name() + ")";
  std::latch waiting(2);
  std::thread killer([&] {
    waiting.wait();
    std::this_thread::sleep_for(100ms);
    mesh[0].reset();
  });
  run_threads(3, [&](int rank) {
    if (rank == 0) return;
    Context& ctx = *mesh[rank];
    int value = 0;
    auto recv = ctx.irecv(0, 1, &value, sizeof(value));
    waiting.count_down();
    auto start = Clock::now();
    // PeerLostError when this rank sees the EOF first, AbortedError when the
    // other survivor's ABORT wins the race; both carry the root cause.
    std::string what = error_of<Error>([&] { recv->wait(); });
    EXPECT_LT(Clock::now() - start, 1500ms);
    EXPECT_TRUE(contains(what, lost + " lost")) << what;
    // Later operations, to any peer, fail at once with the same cause.
    std::string later = error_of<Error>([&] { ctx.send(3 - rank, 2, &value, sizeof(value)); });
    EXPECT_TRUE(contains(later, lost)) << later;
  });
  killer.join();
}

TEST(TcpFailure, PendingReceiveNamesTheLostPeerWithPeerLostError) {
  auto mesh = make_tcp_mesh(2);
  std::latch waiting(1);
  std::thread killer([&] {
    waiting.wait();
    std::this_thread::sleep_for(50ms);
    mesh[0].reset();
  });
  char buffer[16];
  auto recv = mesh[1]->irecv(0, 42, buffer, sizeof(buffer));
  waiting.count_down();
  std::string what = error_of<PeerLostError>([&] { recv->wait(); });
  killer.join();
  EXPECT_TRUE(contains(what, "rank 0 (host " + host_name() + ") lost: connection closed by peer"))
      << what;
  EXPECT_TRUE(contains(what, "tag 42")) << what;
}

// A peer that leaves cleanly while nobody waits on it is not an error...
// until someone tries to talk to it.
TEST(TcpFailure, CleanDepartureIsLazy) {
  auto mesh = make_tcp_mesh(3);
  mesh[2].reset();
  std::this_thread::sleep_for(50ms);
  run_threads(2, [&](int rank) {
    int v = rank, got = -1;
    auto s = mesh[rank]->isend(1 - rank, 1, &v, sizeof(v));
    mesh[rank]->recv(1 - rank, 1, &got, sizeof(got));
    s->wait();
    EXPECT_EQ(got, 1 - rank);
  });
  std::string what = error_of<PeerLostError>([&] { mesh[0]->send(2, 1, "x", 1); });
  EXPECT_TRUE(contains(what, "rank 2 (host")) << what;
}

TEST(TcpFailure, AbortReachesEveryRankWithTheReason) {
  auto mesh = make_tcp_mesh(4);
  std::latch waiting(3);
  run_threads(4, [&](int rank) {
    Context& ctx = *mesh[rank];
    if (rank == 0) {
      waiting.wait();
      std::this_thread::sleep_for(50ms);
      ctx.abort("loss is NaN at step 7");
      std::string own = error_of<AbortedError>([&] { ctx.send(1, 1, "x", 1); });
      EXPECT_EQ(own, "loss is NaN at step 7");
      return;
    }
    // Ranks 1..3 wait on each other, not on rank 0: only the ABORT frees them.
    char buffer[4];
    auto recv = ctx.irecv(rank % 3 + 1, 8, buffer, sizeof(buffer));
    waiting.count_down();
    auto start = Clock::now();
    std::string what = error_of<AbortedError>([&] { recv->wait(); });
    EXPECT_LT(Clock::now() - start, 1s);
    EXPECT_EQ(what, "rank 0 aborted: loss is NaN at step 7");
  });
}

TEST(TcpFailure, OperationTimeoutNamesPeerTagAndSize) {
  auto mesh = make_tcp_mesh(2, loopback_tcp_options(300ms));
  run_threads(2, [&](int rank) {
    Context& ctx = *mesh[rank];
    if (rank == 1) {
      char buffer[16];
      auto start = Clock::now();
      std::string what = error_of<TimeoutError>([&] { ctx.recv(0, 9, buffer, sizeof(buffer)); });
      EXPECT_GE(Clock::now() - start, 250ms);
      EXPECT_TRUE(contains(what, "timed out after 0.3 s waiting for rank 0 (host " + host_name() +
                                     ") (receive tag 9, 16 bytes)"))
          << what;
    } else {
      // Rank 0 never sends; the timeout on rank 1 reaches it as an abort.
      std::this_thread::sleep_for(600ms);
      std::string what = error_of<AbortedError>([&] { ctx.send(1, 1, "x", 1); });
      EXPECT_TRUE(contains(what, "rank 1 aborted: timed out after")) << what;
    }
  });
}

TEST(TcpFailure, ConnectTimeoutNamesTheMissingRank) {
  rendezvous::MemoryStore store;
  auto options = loopback_tcp_options();
  options.connect_timeout = 400ms;
  run_threads(2, [&](int rank) {  // rank 2 of 3 never shows up
    auto start = Clock::now();
    std::string what =
        error_of<TimeoutError>([&] { transport::tcp::connect_full_mesh(store, rank, 3, options); });
    EXPECT_LT(Clock::now() - start, 2s);
    EXPECT_TRUE(contains(what, "rank(s) 2 ")) << what;
  });
}

// A Request may outlive its Context: it finishes with an error, safely.
TEST(TcpFailure, RequestOutlivingItsContext) {
  auto mesh = make_tcp_mesh(2);
  char buffer[8];
  auto recv = mesh[0]->irecv(1, 1, buffer, sizeof(buffer));
  mesh[0].reset();
  std::string what = error_of<AbortedError>([&] { recv->wait(); });
  EXPECT_TRUE(contains(what, "destroyed")) << what;
}

}  // namespace
}  // namespace kolo::transport
