// StripedContext failures: a lost peer, an abort, or an error on a single
// stream reaches every pending operation on every stream, naming the root
// cause, and nothing hangs.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <latch>
#include <string>
#include <thread>
#include <vector>

#include "common/error.h"
#include "striped_mesh.h"

namespace kolo::transport {
namespace {

using namespace std::chrono_literals;
using kolo::testing::loopback_tcp_options;
using kolo::testing::make_exposed_stripes;
using kolo::testing::make_striped_mesh;
using kolo::testing::run_threads;
using kolo::testing::striped_options;
using Clock = std::chrono::steady_clock;

constexpr size_t kThreshold = 300000;
constexpr size_t kMessage = 400000;  // three parts of about 133 KB

std::string host_name() {
  char name[256] = {};
  ::gethostname(name, sizeof(name) - 1);
  return name;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

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

// Sends parts [0, parts) of a message on a rank's raw streams:
// a striped message cut short.
void send_first_parts(const std::vector<Context*>& raw, int peer, Tag tag,
                      const std::vector<uint8_t>& data, size_t parts) {
  const StripeLayout layout(data.size(), raw.size(), kThreshold);
  ASSERT_EQ(layout.parts(), raw.size());
  for (size_t i = 0; i < parts; ++i)
    raw[i]->send(peer, tag, data.data() + layout.offset(i), layout.size(i));
}

// Rank 0 delivers two of the three parts of a message to rank 1, one to
// rank 2, and is then destroyed (a sender that dies mid-message). Every
// pending operation of ranks 1 and 2 - the cut message, a small receive on
// stream 0 only, a receive from each other - fails soon, naming rank 0, and
// later operations fail at once.
TEST(StripedFailure, PeerLostMidMessageFailsEveryPendingOperation) {
  auto mesh = make_exposed_stripes(3, 3, kThreshold, loopback_tcp_options());
  const std::string lost = "rank 0 (host " + host_name() + ")";
  std::latch posted(2);
  run_threads(3, [&](int rank) {
    if (rank == 0) {
      std::vector<uint8_t> data(kMessage, 1);
      posted.wait();
      send_first_parts(mesh.raw[0], 1, 1, data, 2);
      send_first_parts(mesh.raw[0], 2, 1, data, 1);
      mesh.striped[0].reset();
      return;
    }
    Context& ctx = *mesh.striped[rank];
    std::vector<uint8_t> message(kMessage), small(8), from_other(kMessage);
    std::vector<std::unique_ptr<Request>> pending;
    pending.push_back(ctx.irecv(0, 1, message.data(), message.size()));
    pending.push_back(ctx.irecv(0, 2, small.data(), small.size()));
    pending.push_back(ctx.irecv(3 - rank, 3, from_other.data(), from_other.size()));
    posted.count_down();
    for (auto& request : pending) {
      const auto start = Clock::now();
      std::string what = error_of<Error>([&] { request->wait(); });
      EXPECT_LT(Clock::now() - start, 1500ms) << what;
      EXPECT_TRUE(contains(what, lost)) << what;
    }
    std::string later =
        error_of<Error>([&] { ctx.send(3 - rank, 4, message.data(), message.size()); });
    EXPECT_TRUE(contains(later, lost)) << later;
  });
}

TEST(StripedFailure, AbortReachesEveryStreamOfEveryRank) {
  auto mesh = make_striped_mesh(3, striped_options(3));
  std::latch waiting(2);
  run_threads(3, [&](int rank) {
    Context& ctx = *mesh[rank];
    if (rank == 0) {
      waiting.wait();
      std::this_thread::sleep_for(50ms);
      ctx.abort("loss is NaN at step 7");
      std::string own = error_of<AbortedError>([&] { ctx.send(1, 1, "x", 1); });
      EXPECT_EQ(own, "loss is NaN at step 7");
      return;
    }
    // Ranks 1 and 2 wait on each other on every stream: only the ABORT frees them.
    std::vector<uint8_t> large(kMessage), small(4);
    auto striped = ctx.irecv(3 - rank, 8, large.data(), large.size());
    auto single = ctx.irecv(3 - rank, 9, small.data(), small.size());
    waiting.count_down();
    const auto start = Clock::now();
    // Usually exactly rank 0's ABORT; on a stream where rank 1's abort (made
    // of rank 0's) overtakes it, "rank 1 aborted: rank 0 aborted: ...".
    const std::string cause = "rank 0 aborted: loss is NaN at step 7";
    std::string what = error_of<AbortedError>([&] { striped->wait(); });
    EXPECT_TRUE(contains(what, cause)) << what;
    what = error_of<AbortedError>([&] { single->wait(); });
    EXPECT_TRUE(contains(what, cause)) << what;
    EXPECT_LT(Clock::now() - start, 1s);
  });
}

// A receive times out on its last stream only (rank 0 sent the other
// parts). That error aborts the receiver's other streams too: a later send
// on stream 0 fails with it, and rank 0's receive on stream 0 learns it.
TEST(StripedFailure, ErrorOnOneStreamPoisonsTheWholeContext) {
  auto mesh = make_exposed_stripes(2, 3, kThreshold, loopback_tcp_options(500ms));
  run_threads(2, [&](int rank) {
    Context& ctx = *mesh.striped[rank];
    if (rank == 0) {
      std::vector<uint8_t> data(kMessage, 3);
      send_first_parts(mesh.raw[0], 1, 1, data, 2);
      // Rank 0's stream 0 hears of the timeout only through rank 1 aborting
      // every stream (waiting here would time out on its own).
      std::this_thread::sleep_for(900ms);
      std::string what = error_of<AbortedError>([&] { ctx.send(1, 2, "x", 1); });
      EXPECT_TRUE(contains(what, "rank 1 aborted: timed out after 0.5 s waiting for rank 0"))
          << what;
      return;
    }
    std::vector<uint8_t> data(kMessage);
    const auto start = Clock::now();
    std::string what = error_of<TimeoutError>([&] { ctx.recv(0, 1, data.data(), data.size()); });
    EXPECT_GE(Clock::now() - start, 450ms);
    EXPECT_TRUE(contains(
        what, "timed out after 0.5 s waiting for rank 0 (host " + host_name() + ") (receive tag 1"))
        << what;
    std::string later = error_of<AbortedError>([&] { ctx.send(0, 2, "x", 1); });
    EXPECT_TRUE(contains(later, "timed out after 0.5 s")) << later;
  });
}

// check_health() reports what any stream has heard, and spreads it: rank 0
// aborts its last stream only; rank 1 learns it through check_health, and
// its stream 0 is failed with the same cause.
TEST(StripedFailure, CheckHealthSeesEveryStream) {
  auto mesh = make_exposed_stripes(2, 3, kThreshold, loopback_tcp_options());
  Context& ctx = *mesh.striped[1];
  EXPECT_NO_THROW(ctx.check_health());
  mesh.raw[0][2]->abort("disk full");
  const auto deadline = Clock::now() + 5s;
  std::string what;
  while (what.empty() && Clock::now() < deadline) {
    try {
      ctx.check_health();
      std::this_thread::sleep_for(1ms);
    } catch (const AbortedError& e) {
      what = e.what();
    }
  }
  EXPECT_EQ(what, "rank 0 aborted: disk full");
  std::string later = error_of<AbortedError>([&] { ctx.send(0, 1, "x", 1); });
  EXPECT_EQ(later, "rank 0 aborted: disk full");
}

// A Request may outlive its context: it finishes with an error, safely.
TEST(StripedFailure, RequestOutlivingItsContext) {
  auto mesh = make_striped_mesh(2, striped_options(3));
  std::vector<uint8_t> buffer(kMessage);
  auto recv = mesh[0]->irecv(1, 1, buffer.data(), buffer.size());
  auto probe = mesh[0]->irecv(1, 2, buffer.data(), buffer.size());
  mesh[0].reset();
  std::string what = error_of<AbortedError>([&] { recv->wait(); });
  EXPECT_TRUE(contains(what, "destroyed")) << what;
  what = error_of<AbortedError>([&] {
    while (!probe->test()) std::this_thread::sleep_for(1ms);
  });
  EXPECT_TRUE(contains(what, "destroyed")) << what;
}

}  // namespace
}  // namespace kolo::transport
