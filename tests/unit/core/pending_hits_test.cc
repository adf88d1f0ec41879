// PendingHits: the slot-indexed table of tensors a rank waits on as cache
// hits (core/pending_hits.h).
#include "core/pending_hits.h"

#include <gtest/gtest.h>

#include <vector>

namespace kolo::core {
namespace {

std::vector<uint32_t> slots_of(const PendingHits& hits) {
  std::vector<uint32_t> slots;
  hits.for_each([&](uint32_t slot, const TensorEntry*) { slots.push_back(slot); });
  return slots;
}

TEST(PendingHits, FindsWhatWasSetAndCountsEachSlotOnce) {
  PendingHits hits(8);
  TensorEntry a, b;
  EXPECT_TRUE(hits.empty());
  hits.set(5, &a);
  hits.set(2, &b);
  hits.set(5, &b);  // replaces, does not count twice
  EXPECT_EQ(hits.size(), 2u);
  EXPECT_EQ(hits.find(5), &b);
  EXPECT_EQ(hits.find(2), &b);
  EXPECT_EQ(hits.find(3), nullptr);
  EXPECT_EQ(hits.find(100), nullptr);  // past the capacity: nothing waits there
}

TEST(PendingHits, WalksInSlotOrderAndMayEraseWhileWalking) {
  PendingHits hits(64);
  std::vector<TensorEntry> entries(4);
  hits.set(40, &entries[0]);
  hits.set(3, &entries[1]);
  hits.set(17, &entries[2]);
  hits.set(63, &entries[3]);
  EXPECT_EQ(slots_of(hits), (std::vector<uint32_t>{3, 17, 40, 63}));
  std::vector<uint32_t> walked;
  hits.for_each([&](uint32_t slot, TensorEntry*) {
    walked.push_back(slot);
    if (slot % 2 == 1) hits.erase(slot);
  });
  EXPECT_EQ(walked, (std::vector<uint32_t>{3, 17, 40, 63}));
  EXPECT_EQ(slots_of(hits), std::vector<uint32_t>{40});
  hits.erase(40);
  hits.erase(40);  // erasing an empty slot changes nothing
  EXPECT_TRUE(hits.empty());
}

TEST(PendingHits, ClearEmptiesEverySlot) {
  PendingHits hits(4);
  TensorEntry a;
  hits.set(0, &a);
  hits.set(3, &a);
  hits.clear();
  EXPECT_TRUE(hits.empty());
  EXPECT_EQ(hits.find(0), nullptr);
  EXPECT_EQ(hits.find(3), nullptr);
}

TEST(PendingHits, MarksTheEntriesItHoldsAndUnmarksThoseItLetsGo) {
  // Controller::take_entry checks the mark: an entry taken while still
  // held here would leave a pointer to a moved-from entry behind.
  PendingHits hits(8);
  TensorEntry a, b, c, d;
  hits.set(1, &a);
  hits.set(2, &b);
  hits.set(3, &c);
  EXPECT_TRUE(a.waiting_as_hit && b.waiting_as_hit && c.waiting_as_hit);
  hits.set(1, &d);  // replaced: a is no longer held
  EXPECT_FALSE(a.waiting_as_hit);
  EXPECT_TRUE(d.waiting_as_hit);
  hits.erase(2);
  EXPECT_FALSE(b.waiting_as_hit);
  hits.for_each([&](uint32_t slot, TensorEntry*) { hits.erase(slot); });
  EXPECT_FALSE(c.waiting_as_hit || d.waiting_as_hit);
  hits.set(4, &a);
  hits.clear();
  EXPECT_FALSE(a.waiting_as_hit);
}

}  // namespace
}  // namespace kolo::core
