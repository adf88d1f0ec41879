// plan_round: who takes part in the next elastic round and with which rank.
// Survivors keep their host and slot and come first (rank 0 holds the
// committed state that State.sync() broadcasts); new workers fill free slots
// up to the cap; ranks follow assign_ranks over the hosts in plan order.
#include "runner/elastic/round_plan.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <random>
#include <set>

namespace kolo::runner::elastic {
namespace {

using Hosts = std::vector<HostSlots>;
using Running = std::vector<RunningWorker>;
using Ids = std::vector<int>;

// (worker id or -1 for new, host, host slot) of each member, in rank order.
struct Seat {
  int worker;
  std::string host;
  int host_slot;
  bool operator==(const Seat&) const = default;
};
void PrintTo(const Seat& s, std::ostream* os) {
  *os << "{" << s.worker << " on " << s.host << ":" << s.host_slot << "}";
}

std::vector<Seat> seats(const RoundPlan& plan) {
  std::vector<Seat> out;
  for (const auto& m : plan.members)
    out.push_back({m.worker_id.value_or(-1), m.slot.host, m.host_slot});
  return out;
}

std::vector<RankSlot> rank_slots(const RoundPlan& plan) {
  std::vector<RankSlot> out;
  for (const auto& m : plan.members) out.push_back(m.slot);
  return out;
}

TEST(RoundPlanTest, InitialRoundFillsHostsInOrderUpToTheCap) {
  const Hosts usable = {{"a", 2}, {"b", 2}, {"c", 1}};
  RoundPlan plan = plan_round(usable, {}, 3);
  EXPECT_EQ(seats(plan), (std::vector<Seat>{{-1, "a", 0}, {-1, "a", 1}, {-1, "b", 0}}));
  EXPECT_EQ(rank_slots(plan), assign_ranks(usable, 3));
  EXPECT_TRUE(plan.left_out.empty());
}

TEST(RoundPlanTest, InitialRoundMatchesAssignRanksForEveryCap) {
  const Hosts usable = {{"a", 2}, {"b", 1}, {"c", 3}};
  for (int cap = 1; cap <= 6; ++cap) {
    SCOPED_TRACE(cap);
    RoundPlan plan = plan_round(usable, {}, cap);
    EXPECT_EQ(rank_slots(plan), assign_ranks(usable, cap));
    for (const auto& m : plan.members) EXPECT_FALSE(m.worker_id.has_value());
  }
}

TEST(RoundPlanTest, CapAboveTheSlotsUsesEverySlot) {
  RoundPlan plan = plan_round({{"a", 2}, {"b", 1}}, {}, 100);
  EXPECT_EQ(seats(plan), (std::vector<Seat>{{-1, "a", 0}, {-1, "a", 1}, {-1, "b", 0}}));
  EXPECT_EQ(rank_slots(plan), assign_ranks({{"a", 2}, {"b", 1}}, 3));
}

TEST(RoundPlanTest, UnchangedJobKeepsEveryWorkerInPlace) {
  const Hosts usable = {{"a", 2}, {"b", 2}};
  const Running running = {{10, "a", 0}, {11, "a", 1}, {12, "b", 0}, {13, "b", 1}};
  RoundPlan plan = plan_round(usable, running, 4);
  EXPECT_EQ(seats(plan),
            (std::vector<Seat>{{10, "a", 0}, {11, "a", 1}, {12, "b", 0}, {13, "b", 1}}));
  EXPECT_EQ(rank_slots(plan), assign_ranks(usable, 4));
  EXPECT_TRUE(plan.left_out.empty());
}

TEST(RoundPlanTest, HostWithSurvivorsListedLaterStillGetsTheLowerRanks) {
  // a has only new slots and comes first in the registry; b has a survivor.
  const Hosts usable = {{"a", 2}, {"b", 2}};
  RoundPlan plan = plan_round(usable, {{7, "b", 1}}, 4);
  EXPECT_EQ(seats(plan),
            (std::vector<Seat>{{7, "b", 1}, {-1, "b", 0}, {-1, "a", 0}, {-1, "a", 1}}));
  EXPECT_EQ(rank_slots(plan), assign_ranks({{"b", 2}, {"a", 2}}, 4));
  EXPECT_EQ(plan.members.front().slot.rank, 0);
  EXPECT_TRUE(plan.left_out.empty());
}

TEST(RoundPlanTest, SurvivorsBeforeNewWorkersWithinAHostAndRanksMatchAssignRanks) {
  // c and b have survivors (on their later slots), a only new slots.
  const Hosts usable = {{"a", 1}, {"b", 3}, {"c", 1}};
  const Running running = {{5, "c", 0}, {6, "b", 2}};
  RoundPlan plan = plan_round(usable, running, 5);
  EXPECT_EQ(seats(plan), (std::vector<Seat>{
                             {6, "b", 2}, {-1, "b", 0}, {-1, "b", 1}, {5, "c", 0}, {-1, "a", 0}}));
  EXPECT_EQ(rank_slots(plan), assign_ranks({{"b", 3}, {"c", 1}, {"a", 1}}, 5));
  // b's survivor is local rank 0 there although it sits on slot 2.
  EXPECT_EQ(plan.members[0].slot, (RankSlot{"b", 0, 5, 0, 3, 0, 3}));
  EXPECT_EQ(plan.members[3].slot, (RankSlot{"c", 3, 5, 0, 1, 1, 3}));
  EXPECT_EQ(plan.members[4].slot, (RankSlot{"a", 4, 5, 0, 1, 2, 3}));
}

TEST(RoundPlanTest, RankZeroIsASurvivorWheneverOneIsKept) {
  const Hosts usable = {{"a", 2}, {"b", 2}, {"c", 2}};
  for (const auto& [host, slot] : std::vector<std::pair<std::string, int>>{
           {"a", 0}, {"a", 1}, {"b", 0}, {"b", 1}, {"c", 0}, {"c", 1}}) {
    SCOPED_TRACE(host + ":" + std::to_string(slot));
    RoundPlan plan = plan_round(usable, {{42, host, slot}}, 6);
    ASSERT_EQ(plan.members.size(), 6u);
    EXPECT_EQ(plan.members[0].worker_id, 42);
    EXPECT_EQ(plan.members[0].slot.rank, 0);
    EXPECT_EQ(plan.members[0].slot.host, host);
    EXPECT_EQ(plan.members[0].host_slot, slot);
  }
}

TEST(RoundPlanTest, WorkerOnAHostNoLongerUsableIsLeftOut) {
  const Running running = {{1, "a", 0}, {2, "gone", 0}, {3, "b", 0}, {4, "gone", 1}};
  RoundPlan plan = plan_round({{"a", 1}, {"b", 2}}, running, 8);
  EXPECT_EQ(plan.left_out, (Ids{2, 4}));
  EXPECT_EQ(seats(plan), (std::vector<Seat>{{1, "a", 0}, {3, "b", 0}, {-1, "b", 1}}));
}

TEST(RoundPlanTest, WorkerOnASlotTheHostNoLongerHasIsLeftOut) {
  // a shrank from 4 slots to 2: the workers on slots 2 and 3 have no place,
  // and their slots are not offered to new workers either.
  const Running running = {{1, "a", 0}, {2, "a", 3}, {3, "a", 2}};
  RoundPlan plan = plan_round({{"a", 2}}, running, 4);
  EXPECT_EQ(plan.left_out, (Ids{2, 3}));
  EXPECT_EQ(seats(plan), (std::vector<Seat>{{1, "a", 0}, {-1, "a", 1}}));
  EXPECT_EQ(rank_slots(plan), assign_ranks({{"a", 2}}, 2));
}

TEST(RoundPlanTest, CapBelowTheSurvivorsKeepsTheFirstInHostAndSlotOrder) {
  // Which survivors stay: the first ones in the registry's host order, then
  // slot order, whatever the order of `running`; the rest are left out in
  // the order of `running`.
  const Hosts usable = {{"a", 2}, {"b", 2}};
  const Running running = {{13, "b", 1}, {12, "b", 0}, {11, "a", 1}, {10, "a", 0}};
  RoundPlan plan = plan_round(usable, running, 3);
  EXPECT_EQ(seats(plan), (std::vector<Seat>{{10, "a", 0}, {11, "a", 1}, {12, "b", 0}}));
  EXPECT_EQ(plan.left_out, (Ids{13}));
  EXPECT_EQ(rank_slots(plan), assign_ranks({{"a", 2}, {"b", 1}}, 3));

  plan = plan_round(usable, running, 1);
  EXPECT_EQ(seats(plan), (std::vector<Seat>{{10, "a", 0}}));
  EXPECT_EQ(plan.left_out, (Ids{13, 12, 11}));
}

TEST(RoundPlanTest, CapReachedBySurvivorsStartsNoNewWorker) {
  RoundPlan plan = plan_round({{"a", 2}, {"b", 2}}, {{3, "b", 1}, {4, "a", 1}}, 2);
  EXPECT_EQ(seats(plan), (std::vector<Seat>{{4, "a", 1}, {3, "b", 1}}));
  EXPECT_TRUE(plan.left_out.empty());
}

TEST(RoundPlanTest, NewWorkersGoToFreeSlotsInRegistryOrderNotToTheSurvivorsHost) {
  // With room for one new worker, it goes to the first free slot in host
  // order (a), not next to the survivor on b.
  RoundPlan plan = plan_round({{"a", 2}, {"b", 2}}, {{9, "b", 0}}, 2);
  EXPECT_EQ(seats(plan), (std::vector<Seat>{{9, "b", 0}, {-1, "a", 0}}));
  EXPECT_EQ(rank_slots(plan), assign_ranks({{"b", 1}, {"a", 1}}, 2));
}

TEST(RoundPlanTest, NoUsableHostsLeavesEveryRunningWorkerOut) {
  RoundPlan plan = plan_round({}, {{1, "a", 0}, {2, "b", 0}}, 4);
  EXPECT_TRUE(plan.members.empty());
  EXPECT_EQ(plan.left_out, (Ids{1, 2}));
  plan = plan_round({}, {}, 4);
  EXPECT_TRUE(plan.members.empty());
  EXPECT_TRUE(plan.left_out.empty());
}

TEST(RoundPlanTest, CapZeroPlansNobody) {
  RoundPlan plan = plan_round({{"a", 2}}, {{1, "a", 0}, {2, "a", 1}}, 0);
  EXPECT_TRUE(plan.members.empty());
  EXPECT_EQ(plan.left_out, (Ids{1, 2}));
  plan = plan_round({{"a", 2}}, {}, 0);
  EXPECT_TRUE(plan.members.empty());
  EXPECT_TRUE(plan.left_out.empty());
  plan = plan_round({{"a", 2}}, {{1, "a", 0}}, -1);
  EXPECT_TRUE(plan.members.empty());
  EXPECT_EQ(plan.left_out, (Ids{1}));
}

TEST(RoundPlanTest, HostsWithZeroSlotsGetNobody) {
  RoundPlan plan = plan_round({{"a", 0}, {"b", 1}}, {{1, "a", 0}}, 4);
  EXPECT_EQ(seats(plan), (std::vector<Seat>{{-1, "b", 0}}));
  EXPECT_EQ(plan.left_out, (Ids{1}));
}

// Every plan, whatever the input: ranks 0..n-1 in order with one layout from
// assign_ranks; each (host, slot) used once and inside the host's slots;
// every running worker is kept or left out, exactly once; survivors come
// first and keep their seat; as many members as the cap and slots allow.
TEST(RoundPlanTest, InvariantsHoldOnRandomInputs) {
  std::mt19937 rng(20261121);
  const std::vector<std::string> names = {"a", "b", "c", "d", "e"};
  for (int iteration = 0; iteration < 2000; ++iteration) {
    Hosts usable;
    std::map<std::string, int> slots_of;
    for (const auto& name : names)
      if (rng() % 3 != 0) {
        int slots = static_cast<int>(rng() % 4);
        usable.push_back({name, slots});
        slots_of[name] = slots;
      }
    std::shuffle(usable.begin(), usable.end(), rng);
    Running running;
    std::set<std::pair<std::string, int>> taken;
    int next_id = 100;
    for (int i = static_cast<int>(rng() % 8); i > 0; --i) {
      std::string host = names[rng() % names.size()];
      int slot = static_cast<int>(rng() % 5);
      if (taken.insert({host, slot}).second) running.push_back({next_id++, host, slot});
    }
    std::shuffle(running.begin(), running.end(), rng);
    const int cap = static_cast<int>(rng() % 12) - 1;

    SCOPED_TRACE(::testing::Message() << "iteration " << iteration << " cap " << cap);
    RoundPlan plan = plan_round(usable, running, cap);

    int total_slots = 0;
    for (const auto& h : usable) total_slots += h.slots;
    int placeable = 0;  // running workers whose seat still exists
    for (const auto& w : running)
      if (slots_of.count(w.host) && w.slot < slots_of[w.host]) ++placeable;
    const size_t n = plan.members.size();
    ASSERT_EQ(n, static_cast<size_t>(std::max(0, std::min(cap, total_slots))));

    std::set<std::pair<std::string, int>> seats_used;
    std::set<int> kept;
    bool only_new_host_seen = false;  // a host block that starts with a new worker
    std::vector<HostSlots> counts;
    for (size_t r = 0; r < n; ++r) {
      const PlannedMember& m = plan.members[r];
      ASSERT_EQ(m.slot.rank, static_cast<int>(r));
      ASSERT_TRUE(slots_of.count(m.slot.host)) << m.slot.host;
      ASSERT_LT(m.host_slot, slots_of[m.slot.host]);
      ASSERT_GE(m.host_slot, 0);
      ASSERT_TRUE(seats_used.insert({m.slot.host, m.host_slot}).second) << "seat used twice";
      if (counts.empty() || counts.back().host != m.slot.host)
        counts.push_back({m.slot.host, 1});
      else
        ++counts.back().slots;
      if (m.worker_id) {
        // Survivors form the leading hosts; within a host, they come first.
        auto it = std::find_if(running.begin(), running.end(),
                               [&](const RunningWorker& w) { return w.id == *m.worker_id; });
        ASSERT_NE(it, running.end());
        EXPECT_EQ(it->host, m.slot.host);
        EXPECT_EQ(it->slot, m.host_slot);
        ASSERT_TRUE(kept.insert(*m.worker_id).second);
        if (r > 0 && !plan.members[r - 1].worker_id) {
          EXPECT_NE(plan.members[r - 1].slot.host, m.slot.host)
              << "new before a survivor on a host";
        }
        if (r == 0 || plan.members[r - 1].slot.host != m.slot.host) {
          EXPECT_FALSE(only_new_host_seen)
              << "a host with survivors after a host of new workers only";
        }
      } else {
        if (r == 0 || plan.members[r - 1].slot.host != m.slot.host) only_new_host_seen = true;
        EXPECT_FALSE(taken.count({m.slot.host, m.host_slot})) << "new worker on an occupied seat";
      }
    }
    // Hosts appear as one contiguous block each.
    std::set<std::string> hosts_seen;
    for (const auto& c : counts) EXPECT_TRUE(hosts_seen.insert(c.host).second) << c.host;
    if (n > 0) {
      EXPECT_EQ(rank_slots(plan), assign_ranks(counts, static_cast<int>(n)));
    }
    // Survivors: as many as fit; rank 0 is one of them if any.
    EXPECT_EQ(kept.size(), static_cast<size_t>(std::max(0, std::min(cap, placeable))));
    if (!kept.empty()) {
      EXPECT_TRUE(plan.members[0].worker_id.has_value());
    }
    // Every running worker kept or left out, once.
    std::multiset<int> accounted(kept.begin(), kept.end());
    accounted.insert(plan.left_out.begin(), plan.left_out.end());
    EXPECT_EQ(accounted.size(), running.size());
    for (const auto& w : running) EXPECT_EQ(accounted.count(w.id), 1u) << w.id;
  }
}

}  // namespace
}  // namespace kolo::runner::elastic
