// The worker's half of the elastic protocol, against a real MemoryStore with
// a thread playing kolorun's driver: a join announces itself on the two
// counters, waits for the answer to THIS join, and turns a removal into
// WorkerRemovedError; host_updates_since ORs the announced changes after the
// one the worker already knows.
#include "core/elastic_worker.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "common/error.h"
#include "rendezvous/memory_store.h"

namespace kolo::core {
namespace {

using namespace std::chrono_literals;
using rendezvous::MemoryStore;
using rendezvous::to_bytes;
using rendezvous::to_string;
namespace protocol = rendezvous::elastic;
using protocol::Assignment;

int64_t counter(rendezvous::Store& store, const std::string& key) {
  auto value = store.get(key);
  return value ? std::stoll(to_string(*value)) : 0;
}

// Polls until the counter at `key` reaches `at_least`; false after 10 s.
bool wait_counter(rendezvous::Store& store, const std::string& key, int64_t at_least) {
  const auto deadline = std::chrono::steady_clock::now() + 10s;
  while (counter(store, key) < at_least) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(1ms);
  }
  return true;
}

// A thread playing the driver; joined when the test ends, pass or fail.
class Driver {
 public:
  template <typename F>
  explicit Driver(F body) : thread_(std::move(body)) {}
  ~Driver() {
    if (thread_.joinable()) thread_.join();
  }

 private:
  std::thread thread_;
};

// What the driver does for one join: waits until `arrivals` workers have
// arrived (as the real driver watches arrivals_key()), checks the worker's
// join counter, and answers that join.
void answer(rendezvous::Store& store, const std::string& worker, int64_t join, int64_t arrivals,
            const Assignment& reply) {
  ASSERT_TRUE(wait_counter(store, protocol::arrivals_key(), arrivals)) << "no arrival";
  // joins_key is raised before arrivals_key, so it is there by now.
  EXPECT_EQ(counter(store, protocol::joins_key(worker)), join);
  store.set(protocol::assignment_key(worker, join), to_bytes(protocol::encode_assignment(reply)));
}

Assignment place(int64_t round, int rank, int size) {
  Assignment a;
  a.round = round;
  a.rank = rank;
  a.size = size;
  a.local_rank = rank;
  a.local_size = size;
  a.host = "localhost";
  a.hosts_seq = round - 1;
  return a;
}

Assignment removal(Assignment::Kind kind, const std::string& reason) {
  Assignment a;
  a.kind = kind;
  a.reason = reason;
  return a;
}

double elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

TEST(ElasticWorker, JoinRaisesBothCountersAndReturnsItsAssignment) {
  MemoryStore store;
  const Assignment expected = place(1, 0, 1);
  Driver driver([&] { answer(store, "w0", 1, 1, expected); });
  EXPECT_EQ(join_next_round(store, "w0", 10s), expected);
  EXPECT_EQ(counter(store, protocol::joins_key("w0")), 1);
  EXPECT_EQ(counter(store, protocol::arrivals_key()), 1);
}

TEST(ElasticWorker, SecondJoinWaitsForTheSecondAssignmentNotTheFirst) {
  MemoryStore store;
  {
    Driver driver([&] { answer(store, "w0", 1, 1, place(1, 0, 1)); });
    EXPECT_EQ(join_next_round(store, "w0", 10s).round, 1);
  }
  // Assignment 1 is still in the store; join #2 must not take it.
  std::atomic<bool> answered{false};
  Driver driver([&] {
    ASSERT_TRUE(wait_counter(store, protocol::arrivals_key(), 2));
    std::this_thread::sleep_for(100ms);  // a join that read assignment 1 would be back by now
    answered = true;
    answer(store, "w0", 2, 2, place(2, 1, 2));
  });
  const Assignment second = join_next_round(store, "w0", 10s);
  EXPECT_TRUE(answered.load()) << "join #2 returned before the driver answered it";
  EXPECT_EQ(second, place(2, 1, 2));
  EXPECT_EQ(counter(store, protocol::joins_key("w0")), 2);
  EXPECT_EQ(counter(store, protocol::arrivals_key()), 2);
}

TEST(ElasticWorker, SecondJoinTimesOutEvenThoughTheFirstAssignmentExists) {
  MemoryStore store;
  store.set(protocol::assignment_key("w0", 1),
            to_bytes(protocol::encode_assignment(place(1, 0, 1))));
  store.add(protocol::joins_key("w0"), 1);  // join #1 happened earlier
  EXPECT_THROW(join_next_round(store, "w0", 150ms), TimeoutError);
  EXPECT_EQ(counter(store, protocol::joins_key("w0")), 2);
}

TEST(ElasticWorker, WorkersCountArrivalsTogetherAndJoinsApart) {
  MemoryStore store;
  Driver driver([&] {
    ASSERT_TRUE(wait_counter(store, protocol::arrivals_key(), 2));
    EXPECT_EQ(counter(store, protocol::joins_key("a")), 1);
    EXPECT_EQ(counter(store, protocol::joins_key("b")), 1);
    store.set(protocol::assignment_key("a", 1),
              to_bytes(protocol::encode_assignment(place(1, 0, 2))));
    store.set(protocol::assignment_key("b", 1),
              to_bytes(protocol::encode_assignment(place(1, 1, 2))));
  });
  Assignment b;
  std::thread other([&] {
    try {
      b = join_next_round(store, "b", 10s);
    } catch (const std::exception& e) {
      ADD_FAILURE() << "worker b: " << e.what();
    }
  });
  const Assignment a = join_next_round(store, "a", 10s);
  other.join();
  EXPECT_EQ(a, place(1, 0, 2));
  EXPECT_EQ(b, place(1, 1, 2));
}

TEST(ElasticWorker, RemovedAnswerThrowsWorkerRemovedWithTheReason) {
  MemoryStore store;
  Driver driver([&] {
    answer(store, "w3", 1, 1, removal(Assignment::Kind::kRemoved, "host b is blacklisted"));
  });
  try {
    join_next_round(store, "w3", 10s);
    FAIL() << "a removed worker joined";
  } catch (const WorkerRemovedError& e) {
    EXPECT_EQ(e.code(), StatusCode::kRemoved);
    EXPECT_EQ(e.status().code(), StatusCode::kRemoved);
    EXPECT_NE(std::string(e.what()).find("host b is blacklisted"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("removed"), std::string::npos) << e.what();
  }
}

TEST(ElasticWorker, AbortedAnswerThrowsWorkerRemovedWithTheReason) {
  MemoryStore store;
  Driver driver([&] {
    answer(store, "w3", 1, 1, removal(Assignment::Kind::kAborted, "too few hosts: 1 < --min-np 2"));
  });
  try {
    join_next_round(store, "w3", 10s);
    FAIL() << "a worker of an aborted job joined";
  } catch (const WorkerRemovedError& e) {
    EXPECT_EQ(e.code(), StatusCode::kRemoved);
    EXPECT_NE(std::string(e.what()).find("too few hosts: 1 < --min-np 2"), std::string::npos)
        << e.what();
  }
}

TEST(ElasticWorker, NoAnswerTimesOutWithinTheTimeoutNamingTheVariable) {
  MemoryStore store;
  const auto start = std::chrono::steady_clock::now();
  try {
    join_next_round(store, "w5", 300ms);
    FAIL() << "joined without an answer";
  } catch (const TimeoutError& e) {
    const double took = elapsed_ms(start);
    EXPECT_GE(took, 250);
    EXPECT_LT(took, 3000);
    const std::string what = e.what();
    EXPECT_NE(what.find("KOLO_ELASTIC_TIMEOUT"), std::string::npos) << what;
    EXPECT_NE(what.find("w5"), std::string::npos) << what;
    EXPECT_NE(what.find("0.3 s"), std::string::npos) << what;
    EXPECT_EQ(e.code(), StatusCode::kTimeout);
  }
  // The join was announced all the same (the driver may still answer it).
  EXPECT_EQ(counter(store, protocol::joins_key("w5")), 1);
  EXPECT_EQ(counter(store, protocol::arrivals_key()), 1);
}

TEST(ElasticWorker, MalformedAnswerIsAnInvalidArgument) {
  MemoryStore store;
  Driver driver([&] {
    ASSERT_TRUE(wait_counter(store, protocol::arrivals_key(), 1));
    store.set(protocol::assignment_key("w1", 1), to_bytes("kind=join\nrank=0\n"));
  });
  EXPECT_THROW(join_next_round(store, "w1", 10s), InvalidArgument);
}

TEST(ElasticWorker, HostUpdatesWithoutAnyAnnouncementAreSeqZero) {
  MemoryStore store;
  HostUpdates u = host_updates_since(store, 0);
  EXPECT_EQ(u.seq, 0);
  EXPECT_EQ(u.changes, 0u);
  u = host_updates_since(store, 4);
  EXPECT_EQ(u.seq, 0);
  EXPECT_EQ(u.changes, 0u);
}

void announce(rendezvous::Store& store, int64_t seq, const char* change) {
  store.set(protocol::host_update_key(seq), to_bytes(change));
  store.set(protocol::hosts_seq_key(), to_bytes(std::to_string(seq)));
}

TEST(ElasticWorker, HostUpdatesOrOnlyTheChangesAfterAcked) {
  MemoryStore store;
  announce(store, 1, "removed");
  announce(store, 2, "added");
  announce(store, 3, "added");
  struct Case {
    int64_t acked;
    unsigned changes;
  };
  for (const Case& c :
       {Case{0, protocol::kHostsAdded | protocol::kHostsRemoved}, Case{1, protocol::kHostsAdded},
        Case{2, protocol::kHostsAdded}, Case{3, 0u}, Case{7, 0u}}) {
    SCOPED_TRACE(c.acked);
    HostUpdates u = host_updates_since(store, c.acked);
    EXPECT_EQ(u.seq, 3);
    EXPECT_EQ(u.changes, c.changes);
  }
}

TEST(ElasticWorker, HostUpdatesMixedKindsIncludingBoth) {
  MemoryStore store;
  announce(store, 1, "added");
  announce(store, 2, "added,removed");
  announce(store, 3, "removed");
  EXPECT_EQ(host_updates_since(store, 0).changes, protocol::kHostsAdded | protocol::kHostsRemoved);
  EXPECT_EQ(host_updates_since(store, 1).changes, protocol::kHostsAdded | protocol::kHostsRemoved);
  EXPECT_EQ(host_updates_since(store, 2).changes, unsigned{protocol::kHostsRemoved});
  // Only seq 1 announced so far: a worker that acked 0 sees just "added".
  MemoryStore early;
  announce(early, 1, "added");
  EXPECT_EQ(host_updates_since(early, 0).changes, unsigned{protocol::kHostsAdded});
  EXPECT_EQ(host_updates_since(early, 0).seq, 1);
}

// Counts get() calls, to check the cost of a poll when nothing changed.
class CountingStore final : public rendezvous::Store {
 public:
  void set(const std::string& key, const rendezvous::Bytes& value) override {
    base_.set(key, value);
  }
  std::optional<rendezvous::Bytes> get(const std::string& key) override {
    ++gets;
    return base_.get(key);
  }
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override {
    base_.wait(keys, timeout);
  }
  int64_t add(const std::string& key, int64_t delta) override { return base_.add(key, delta); }
  rendezvous::CompareSetResult compare_set(const std::string& key,
                                           const std::optional<rendezvous::Bytes>& expected,
                                           const rendezvous::Bytes& desired) override {
    return base_.compare_set(key, expected, desired);
  }
  bool remove(const std::string& key) override { return base_.remove(key); }

  int gets = 0;

 private:
  MemoryStore base_;
};

TEST(ElasticWorker, HostUpdatesCostOneReadWhenNothingChanged) {
  CountingStore store;
  announce(store, 1, "added");
  announce(store, 2, "removed");
  store.gets = 0;
  EXPECT_EQ(host_updates_since(store, 2).changes, 0u);
  EXPECT_EQ(store.gets, 1);
  store.gets = 0;
  EXPECT_EQ(host_updates_since(store, 0).changes, protocol::kHostsAdded | protocol::kHostsRemoved);
  EXPECT_EQ(store.gets, 3);  // the seq and the two updates
}

TEST(ElasticWorker, HostUpdateWithUnknownTextIsAnInvalidArgument) {
  MemoryStore store;
  announce(store, 1, "moved");
  EXPECT_THROW(host_updates_since(store, 0), InvalidArgument);
  EXPECT_NO_THROW(host_updates_since(store, 1)) << "an acked update is not read again";
}

TEST(ElasticWorker, HostSeqThatIsNotANumberIsAnInvalidArgument) {
  for (const char* text : {"3x", "", "-1", "seven"}) {
    SCOPED_TRACE(text);
    MemoryStore store;
    store.set(rendezvous::elastic::hosts_seq_key(), rendezvous::to_bytes(text));
    EXPECT_THROW(host_updates_since(store, 0), InvalidArgument);
  }
}

}  // namespace
}  // namespace kolo::core
