// TensorQueue: the hand-off from enqueueing threads to the background
// thread, and the names in flight it refuses to see twice
// (core/tensor_queue.h).
#include "core/tensor_queue.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "allocation_counter.h"
#include "common/error.h"

namespace kolo::core {
namespace {

TensorEntry entry_named(const std::string& name) {
  TensorEntry entry;
  entry.request.name = name;
  entry.handle = std::make_shared<HandleState>();
  return entry;
}

std::vector<TensorEntry> take_all(TensorQueue& queue) {
  std::vector<TensorEntry> taken;
  queue.take_all(taken);
  return taken;
}

std::vector<std::string> names_of(const std::vector<TensorEntry>& entries) {
  std::vector<std::string> names;
  for (const auto& entry : entries) names.push_back(entry.request.name);
  return names;
}

// What the engine does once a response ran: the names may be used again.
void release_all(TensorQueue& queue, const std::vector<TensorEntry>& entries) {
  std::vector<const std::string*> names;
  names.reserve(entries.size());
  for (const auto& entry : entries) names.push_back(&entry.request.name);
  queue.release(names);
}

TEST(TensorQueue, HandsOverEntriesInPushOrder) {
  TensorQueue queue;
  queue.push(entry_named("a"));
  std::vector<TensorEntry> group;
  group.push_back(entry_named("b"));
  group.push_back(entry_named("c"));
  queue.push(std::move(group));
  queue.push(entry_named("d"));
  EXPECT_FALSE(queue.empty());
  EXPECT_EQ(names_of(take_all(queue)), (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_TRUE(queue.empty());
  EXPECT_TRUE(take_all(queue).empty());
}

TEST(TensorQueue, RefusesANameInFlightUntilItIsReleased) {
  TensorQueue queue;
  queue.push(entry_named("grad"));
  std::vector<TensorEntry> taken = take_all(queue);
  // Taken by a cycle is still in flight: only the response's end frees it.
  try {
    queue.push(entry_named("grad"));
    FAIL() << "a name in flight was accepted twice";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("tensor name 'grad' is already in use"), std::string::npos)
        << e.what();
  }
  EXPECT_TRUE(queue.empty());
  release_all(queue, taken);
  queue.push(entry_named("grad"));
  EXPECT_EQ(names_of(take_all(queue)), std::vector<std::string>{"grad"});
}

TEST(TensorQueue, RefusedGroupClaimsNoneOfItsNames) {
  TensorQueue queue;
  queue.push(entry_named("busy"));
  std::vector<TensorEntry> group(3);
  for (int i = 0; i < 2; ++i) group[i] = entry_named("free." + std::to_string(i));
  group[2] = entry_named("busy");
  EXPECT_THROW(queue.push(std::move(group)), InvalidArgument);
  // The group's other names were taken back: they go through now.
  queue.push(entry_named("free.0"));
  queue.push(entry_named("free.1"));
  EXPECT_EQ(names_of(take_all(queue)), (std::vector<std::string>{"busy", "free.0", "free.1"}));
}

TEST(TensorQueue, RepeatedNameWithinOneGroupIsRefused) {
  TensorQueue queue;
  std::vector<TensorEntry> group;
  group.push_back(entry_named("x"));
  group.push_back(entry_named("x"));
  EXPECT_THROW(queue.push(std::move(group)), InvalidArgument);
  EXPECT_TRUE(queue.empty());
  queue.push(entry_named("x"));  // and "x" is not left claimed
  EXPECT_EQ(take_all(queue).size(), 1u);
}

TEST(TensorQueue, FailAllCompletesTheQueuedHandlesAndFreesTheirNames) {
  TensorQueue queue;
  TensorEntry entry = entry_named("t");
  auto handle = entry.handle;
  queue.push(std::move(entry));
  queue.fail_all(Status(StatusCode::kAborted, "gone"));
  ASSERT_TRUE(handle->done());
  EXPECT_EQ(handle->status().code(), StatusCode::kAborted);
  EXPECT_TRUE(queue.empty());
  queue.push(entry_named("t"));
  EXPECT_FALSE(queue.empty());
}

// A training loop claims and releases the same number of names every step;
// after the first step the table of names in flight reuses the nodes it
// released instead of allocating one per name, and the queue and the taker
// trade vectors that already have the room. Names fit std::string's inline
// buffer, so a node is the only allocation a claim could make.
TEST(TensorQueue, SteadyStepsAllocateNothingInTheQueue) {
  constexpr int kTensors = 64;
  std::vector<std::string> names;
  for (int i = 0; i < kTensors; ++i) names.push_back("g." + std::to_string(i));
  std::vector<TensorEntry> entries;
  for (const auto& name : names) entries.push_back(entry_named(name));

  TensorQueue queue;
  auto step = [&] {
    for (auto& entry : entries) queue.push(std::move(entry));
    queue.take_all(entries);
    release_all(queue, entries);
  };
  step();  // the first step allocates its nodes
  kolo::testing::start_counting_allocations();
  step();
  const size_t allocations = kolo::testing::stop_counting_allocations();
  // Without reuse: at least one node per name (64), and the queue's vector
  // doubling up to 64 entries (7). With it: only release_all's own list of
  // names (1).
  EXPECT_LE(allocations, 1u);
  EXPECT_EQ(names_of(entries), names);
}

}  // namespace
}  // namespace kolo::core
