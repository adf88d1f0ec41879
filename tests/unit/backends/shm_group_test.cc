// The shared-memory segment and group: names vanish once unlinked, phases
// order the members, and every failure (abort, a dead member, a member that
// never arrives) ends waits with an error naming the member, never a hang.
#include "transport/shm/shm_group.h"

#include <dirent.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <set>
#include <string>
#include <thread>

#include "common/error.h"
#include "support/tcp_mesh.h"
#include "transport/shm/shm_segment.h"
#include "unit/backends/topology_fixture.h"

namespace kolo::testing {
namespace {

using transport::shm::ShmGroup;
using transport::shm::ShmOptions;
using transport::shm::ShmSegment;

std::set<std::string> kolo_segments() {
  std::set<std::string> names;
  if (DIR* dir = ::opendir("/dev/shm")) {
    while (dirent* entry = ::readdir(dir))
      if (std::string(entry->d_name).rfind("kolo-", 0) == 0) names.insert(entry->d_name);
    ::closedir(dir);
  }
  return names;
}

ShmOptions quick_options() {
  ShmOptions options;
  options.slot_bytes = 4096;
  options.spin = std::chrono::microseconds(50);
  options.op_timeout = std::chrono::milliseconds(400);
  return options;
}

// Two members over one segment, as two threads of this process.
struct Pair {
  std::unique_ptr<ShmGroup> a, b;
  explicit Pair(const ShmOptions& options = quick_options()) {
    const size_t bytes = ShmGroup::segment_bytes(2, options.slot_bytes);
    ShmSegment created = ShmSegment::create("/kolo-test-", bytes);
    ShmGroup::format(created, 2);
    ShmSegment opened = ShmSegment::open(created.name(), bytes);
    created.unlink();
    const std::vector<std::string> names{"rank 0 (host a)", "rank 1 (host b)"};
    const std::vector<pid_t> pids{::getpid(), ::getpid()};
    a = std::make_unique<ShmGroup>(std::move(created), 0, names, pids, options);
    b = std::make_unique<ShmGroup>(std::move(opened), 1, names, pids, options);
  }
};

// Runs `blocking` on a thread, checks that it has not returned 20 ms later,
// runs `release`, and checks that it then returns.
void expect_blocked_until(const std::function<void()>& blocking,
                          const std::function<void()>& release) {
  std::atomic<bool> returned{false};
  std::thread waiter([&] {
    blocking();
    returned = true;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(returned.load());
  release();
  waiter.join();
  EXPECT_TRUE(returned.load());
}

TEST(ShmSegmentTest, NameGoesAwayOnUnlinkAndTheMappingStays) {
  ShmSegment segment = ShmSegment::create("/kolo-test-", 8192);
  const std::string name = segment.name();
  EXPECT_EQ(name.rfind("/kolo-test-", 0), 0u);
  EXPECT_EQ(kolo_segments().count(name.substr(1)), 1u);
  ShmSegment other = ShmSegment::open(name, 8192);
  static_cast<char*>(segment.data())[100] = 42;
  EXPECT_EQ(static_cast<char*>(other.data())[100], 42);
  segment.unlink();
  EXPECT_EQ(kolo_segments().count(name.substr(1)), 0u);
  EXPECT_THROW(ShmSegment::open(name, 8192), IoError);
  static_cast<char*>(other.data())[101] = 7;
  EXPECT_EQ(static_cast<char*>(segment.data())[101], 7);
}

TEST(ShmSegmentTest, WrongSizeIsRefused) {
  ShmSegment segment = ShmSegment::create("/kolo-test-", 8192);
  EXPECT_THROW(ShmSegment::open(segment.name(), 4096), IoError);
}

TEST(ShmGroupTest, WaitReturnsOnceThePeerAdvanced) {
  Pair pair;
  expect_blocked_until([&] { pair.b->wait_member(0, 1); }, [&] { pair.a->advance(); });
}

TEST(ShmGroupTest, BuffersAlternateAndARetiredSlotWaitsForEveryMembersNextPhase) {
  Pair pair;
  EXPECT_EQ(pair.a->next_buffer(), 0);
  EXPECT_EQ(pair.a->next_buffer(), 1);
  EXPECT_EQ(pair.a->next_buffer(), 0);
  // a retires slot 0 with no phase since: taking it again would wait for
  // a's own next advance forever, so it is refused at once.
  pair.a->retire_slot(0);
  EXPECT_THROW(pair.a->acquire_slot(0), InternalError);
  // After a's phase the slot waits for b's too (b may still read it).
  pair.a->advance();
  expect_blocked_until([&] { pair.a->acquire_slot(0); }, [&] { pair.b->advance(); });
}

TEST(ShmGroupTest, AbortReachesAWaitingMemberWithTheReason) {
  Pair pair(ShmOptions{true, 4096, std::chrono::microseconds(50), std::chrono::seconds(20)});
  std::string error;
  std::thread waiter([&] {
    try {
      pair.b->wait_member(0, 1);
    } catch (const AbortedError& e) {
      error = e.what();
    }
  });
  std::this_thread::sleep_for(
      std::chrono::milliseconds(100));  // past the spin: asleep on the futex
  pair.a->abort("disk full on rank 0");
  waiter.join();
  EXPECT_EQ(error, "rank 0 (host a) aborted: disk full on rank 0");
  EXPECT_THROW(pair.b->check_usable(), AbortedError);
}

TEST(ShmGroupTest, AMemberThatNeverArrivesTimesOutByName) {
  Pair pair;
  try {
    pair.b->wait_member(0, 1);
    FAIL() << "wait returned";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 0 (host a) did not reach"), std::string::npos)
        << e.what();
  }
}

TEST(ShmGroupTest, ADeadMemberIsReportedLostEvenBeforeItIsReaped) {
  const ShmOptions options{true, 4096, std::chrono::microseconds(50), std::chrono::seconds(20)};
  const size_t bytes = ShmGroup::segment_bytes(2, options.slot_bytes);
  ShmSegment segment = ShmSegment::create("/kolo-test-", bytes);
  ShmGroup::format(segment, 2);
  const std::string name = segment.name();
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    try {
      ShmSegment mine = ShmSegment::open(name, bytes);
    } catch (...) {
      ::_exit(1);
    }
    ::_exit(0);  // dies without ever advancing
  }
  // Wait for the child's exit without reaping it (WNOWAIT): it stays a
  // zombie, which kill(pid, 0) still finds, and it has attached before the
  // name is unlinked.
  siginfo_t info{};
  ASSERT_EQ(::waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOWAIT), 0);
  ASSERT_EQ(info.si_status, 0) << "the child could not attach";
  segment.unlink();
  ShmGroup group(std::move(segment), 0, {"rank 0 (host a)", "rank 1 (host a)"}, {::getpid(), child},
                 options);
  try {
    group.wait_member(1, 1);
    FAIL() << "wait returned";
  } catch (const PeerLostError& e) {
    EXPECT_NE(std::string(e.what()).find("rank 1 (host a) lost: its process"), std::string::npos)
        << e.what();
  }
  int status = 0;
  ::waitpid(child, &status, 0);
}

TEST(ShmGroupTest, BackendsLeaveNoSegmentBehind) {
  auto backends = make_backends({0, 0, 0, 1, 1, 1});
  std::set<std::string> names;
  for (auto& b : backends) {
    ASSERT_NE(b->topology().shm, nullptr);
    names.insert(b->topology().shm->segment().name().substr(1));
  }
  EXPECT_EQ(names.size(), 2u) << "one segment per host";
  const auto present = kolo_segments();
  for (const auto& name : names)
    EXPECT_EQ(present.count(name), 0u) << name << " must be unlinked once every rank mapped it";
}

TEST(ShmGroupTest, AFailingRankFailsItsHostPeersWithTheRootCause) {
  auto backends = make_backends({0, 0, 0});
  std::vector<std::string> errors(3);
  run_threads(3, [&](int rank) {
    try {
      if (rank == 2) {
        backends[rank]->abort("rank 2 ran out of memory");
        return;
      }
      std::vector<float> data(100000, 1.0f);
      backends[rank]->allreduce(data.data(), data.data(), data.size(), DataType::kFloat32, {});
    } catch (const Error& e) {
      errors[rank] = e.what();
    }
  });
  for (int r : {0, 1})
    EXPECT_NE(errors[r].find("rank 2 ran out of memory"), std::string::npos) << errors[r];
}

}  // namespace
}  // namespace kolo::testing
