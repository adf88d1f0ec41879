// How worker failures turn into blacklistings (KOLO_ELASTIC_HOST_FAILURES),
// and how a round treats a blacklisted host: its healthy workers stay, its
// free slots get nobody. Made-up time points; no test here sleeps.
#include <gtest/gtest.h>

#include "common/error.h"
#include "runner/elastic/host_registry.h"
#include "runner/elastic/round_plan.h"

namespace kolo::runner::elastic {
namespace {

using Clock = HostRegistry::Clock;
using Names = std::vector<std::string>;
using std::chrono::seconds;

const Clock::time_point t0 = Clock::time_point() + std::chrono::hours(1000);

TEST(HostFailuresTest, HostIsBlacklistedAtTheNthFailureNotBefore) {
  HostRegistry r(std::nullopt, 3);
  r.update({{"a", 4}, {"b", 1}}, t0);
  auto v = r.record_failure("a", t0);
  EXPECT_EQ(v.failures, 1);
  EXPECT_FALSE(v.blacklisted);
  EXPECT_FALSE(r.is_blacklisted("a", t0));
  EXPECT_EQ(r.usable_slots(), 5);
  EXPECT_EQ(r.record_failure("a", t0 + seconds(1)).failures, 2);
  EXPECT_EQ(r.record_failure("b", t0 + seconds(1)).failures, 1);  // counted per host
  v = r.record_failure("a", t0 + seconds(2));
  EXPECT_EQ(v.failures, 3);
  EXPECT_TRUE(v.blacklisted);
  EXPECT_EQ(v.until, std::nullopt);  // no cooldown: for the rest of the job
  EXPECT_TRUE(r.is_blacklisted("a", t0 + seconds(2)));
  EXPECT_EQ(r.blacklisted(t0 + seconds(2)), (Names{"a"}));
  EXPECT_EQ(r.usable_slots(), 1);
}

TEST(HostFailuresTest, OneFailureBlacklistsWithAThresholdOfOne) {
  HostRegistry r(std::make_pair(10.0, 100.0), 1);
  r.update({{"a", 2}}, t0);
  const auto v = r.record_failure("a", t0);
  EXPECT_TRUE(v.blacklisted);
  EXPECT_EQ(v.failures, 1);
  EXPECT_EQ(v.until, t0 + seconds(10));
}

TEST(HostFailuresTest, FailuresWhileOutCountNothingAndTheCountRestartsAfterACooldown) {
  HostRegistry r(std::make_pair(10.0, 100.0), 2);
  r.update({{"a", 2}}, t0);
  r.record_failure("a", t0);
  EXPECT_TRUE(r.record_failure("a", t0).blacklisted);
  // Its other worker fails a moment later: already out, nothing doubles.
  const auto v = r.record_failure("a", t0 + seconds(1));
  EXPECT_TRUE(v.blacklisted);
  EXPECT_EQ(v.failures, 0);
  EXPECT_EQ(v.until, t0 + seconds(10));
  // Back after the cooldown: one failure is not enough again.
  EXPECT_EQ(r.refresh(t0 + seconds(10)).added, (Names{"a"}));
  EXPECT_FALSE(r.record_failure("a", t0 + seconds(11)).blacklisted);
  EXPECT_EQ(r.record_failure("a", t0 + seconds(12)).until, t0 + seconds(32));  // doubled: 20 s
}

TEST(HostFailuresTest, DiscoveredListsBlacklistedHostsTooInRegistryOrder) {
  HostRegistry r(std::nullopt, 1);
  r.update({{"a", 2}, {"b", 1}, {"c", 3}}, t0);
  r.record_failure("b", t0);
  EXPECT_EQ(r.discovered(), (std::vector<HostSlots>{{"a", 2}, {"b", 1}, {"c", 3}}));
  EXPECT_EQ(r.usable(), (std::vector<HostSlots>{{"a", 2}, {"c", 3}}));
  r.update({{"a", 2}, {"c", 3}}, t0 + seconds(1));  // b gone from discovery
  EXPECT_EQ(r.discovered(), (std::vector<HostSlots>{{"a", 2}, {"c", 3}}));
  EXPECT_TRUE(r.blacklisted(t0 + seconds(1)).empty());
}

TEST(HostFailuresTest, RejectsAThresholdBelowOne) {
  EXPECT_THROW(HostRegistry(std::nullopt, 0), InvalidArgument);
}

TEST(HostFailuresTest, ClosedHostKeepsItsRunningWorkersButGetsNoNewOnes) {
  // a:4 is blacklisted after worker 2 (slot 2) failed; b:2 is fine.
  const std::vector<RunningWorker> running = {{0, "a", 0}, {1, "a", 1}, {3, "a", 3}, {4, "b", 0}};
  RoundPlan plan = plan_round({{"a", 4}, {"b", 2}}, running, 100, {"a"});
  EXPECT_TRUE(plan.left_out.empty());
  ASSERT_EQ(plan.members.size(), 5u);
  std::vector<std::pair<int, std::string>> seats;
  for (const auto& m : plan.members) seats.emplace_back(m.worker_id.value_or(-1), m.slot.host);
  EXPECT_EQ(seats, (std::vector<std::pair<int, std::string>>{
                       {0, "a"}, {1, "a"}, {3, "a"}, {4, "b"}, {-1, "b"}}));
  for (size_t i = 0; i < plan.members.size(); ++i) EXPECT_EQ(plan.members[i].slot.rank, int(i));
}

TEST(HostFailuresTest, ClosedHostWithoutWorkersGetsNobody) {
  RoundPlan plan = plan_round({{"a", 4}}, {}, 100, {"a"});
  EXPECT_TRUE(plan.members.empty());
}

TEST(HostFailuresTest, OpenHostRefillsTheSlotOfAFailedWorker) {
  const std::vector<RunningWorker> running = {{0, "a", 0}, {1, "a", 1}, {3, "a", 3}};
  RoundPlan plan = plan_round({{"a", 4}}, running, 100);
  ASSERT_EQ(plan.members.size(), 4u);
  EXPECT_FALSE(plan.members[3].worker_id.has_value());
  EXPECT_EQ(plan.members[3].host_slot, 2);
}

}  // namespace
}  // namespace kolo::runner::elastic
