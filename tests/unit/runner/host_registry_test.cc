// The elastic driver's view of its hosts: stable order, what changed between
// discoveries, and the blacklist with its doubling cooldown, all on made-up
// time points (no test here sleeps).
#include "runner/elastic/host_registry.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "common/error.h"

namespace kolo::runner::elastic {
namespace {

using Hosts = std::vector<HostSlots>;
using Names = std::vector<std::string>;
using Clock = HostRegistry::Clock;
using std::chrono::seconds;

const Clock::time_point t0 = Clock::time_point() + std::chrono::hours(1000);

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

TEST(HostRegistryTest, HostsKeepTheOrderTheyWereFirstDiscoveredIn) {
  HostRegistry r(std::nullopt);
  auto c = r.update({{"b", 1}, {"a", 2}}, t0);
  EXPECT_EQ(c.added, (Names{"b", "a"}));
  EXPECT_TRUE(c.removed.empty());
  EXPECT_EQ(r.usable(), (Hosts{{"b", 1}, {"a", 2}}));

  // A new host goes last, whatever the script's order.
  c = r.update({{"c", 1}, {"a", 2}, {"b", 1}}, t0);
  EXPECT_EQ(c.added, (Names{"c"}));
  EXPECT_TRUE(c.removed.empty());
  EXPECT_EQ(r.usable(), (Hosts{{"b", 1}, {"a", 2}, {"c", 1}}));

  c = r.update({{"c", 1}, {"a", 2}}, t0);
  EXPECT_TRUE(c.added.empty());
  EXPECT_EQ(c.removed, (Names{"b"}));
  EXPECT_EQ(r.usable(), (Hosts{{"a", 2}, {"c", 1}}));

  // b comes back to its old place, ahead of the hosts discovered after it.
  c = r.update({{"a", 2}, {"c", 1}, {"b", 1}}, t0);
  EXPECT_EQ(c.added, (Names{"b"}));
  EXPECT_EQ(r.usable(), (Hosts{{"b", 1}, {"a", 2}, {"c", 1}}));
  EXPECT_EQ(r.usable_slots(), 4);
}

TEST(HostRegistryTest, SlotChangesCountAsAddedOrRemoved) {
  HostRegistry r(std::nullopt);
  r.update({{"a", 2}, {"b", 2}}, t0);
  auto c = r.update({{"a", 4}, {"b", 1}}, t0);
  EXPECT_EQ(c.added, (Names{"a"}));
  EXPECT_EQ(c.removed, (Names{"b"}));
  EXPECT_EQ(r.usable(), (Hosts{{"a", 4}, {"b", 1}}));
  EXPECT_EQ(r.usable_slots(), 5);
}

TEST(HostRegistryTest, SameListTwiceIsNoChange) {
  HostRegistry r(std::nullopt);
  EXPECT_TRUE(r.update({{"a", 2}}, t0).any());
  auto c = r.update({{"a", 2}}, t0 + seconds(1));
  EXPECT_FALSE(c.any());
  EXPECT_FALSE(r.refresh(t0 + seconds(2)).any());
}

TEST(HostRegistryTest, EmptyDiscoveryRemovesEverything) {
  HostRegistry r(std::nullopt);
  r.update({{"a", 1}, {"b", 1}}, t0);
  auto c = r.update({}, t0);
  EXPECT_EQ(c.removed, (Names{"a", "b"}));
  EXPECT_TRUE(r.usable().empty());
  EXPECT_EQ(r.usable_slots(), 0);
}

TEST(HostRegistryTest, BlacklistedHostLeavesAtOnceAndIsNotReportedRemoved) {
  HostRegistry r(std::nullopt);
  r.update({{"a", 2}, {"b", 2}}, t0);
  EXPECT_EQ(r.blacklist("b", t0 + seconds(5)), std::nullopt);  // no cooldown: for good
  EXPECT_EQ(r.usable(), (Hosts{{"a", 2}}));
  EXPECT_EQ(r.usable_slots(), 2);
  EXPECT_TRUE(r.is_blacklisted("b", t0 + seconds(5)));
  EXPECT_FALSE(r.is_blacklisted("a", t0 + seconds(5)));

  EXPECT_FALSE(r.refresh(t0 + seconds(6)).any());
  EXPECT_FALSE(r.update({{"a", 2}, {"b", 2}}, t0 + seconds(7)).any());
  EXPECT_FALSE(r.update({{"a", 2}}, t0 + seconds(8)).any());  // b gone: already out
  EXPECT_FALSE(r.update({{"a", 2}, {"b", 4}}, t0 + seconds(9)).any());
  EXPECT_EQ(r.usable(), (Hosts{{"a", 2}}));
}

TEST(HostRegistryTest, WithoutCooldownAHostNeverReturns) {
  HostRegistry r(std::nullopt);
  r.update({{"a", 1}}, t0);
  r.blacklist("a", t0);
  const auto much_later = t0 + std::chrono::hours(24 * 365 * 10);
  EXPECT_TRUE(r.is_blacklisted("a", much_later));
  EXPECT_FALSE(r.update({{"a", 1}}, much_later).any());
  EXPECT_TRUE(r.usable().empty());
  EXPECT_EQ(r.next_cooldown_end(), std::nullopt);
}

TEST(HostRegistryTest, CooldownDoublesUpToItsCap) {
  HostRegistry r(std::make_pair(10.0, 25.0));
  r.update({{"a", 2}, {"b", 1}}, t0);

  EXPECT_EQ(r.blacklist("a", t0), t0 + seconds(10));
  EXPECT_EQ(r.next_cooldown_end(), t0 + seconds(10));
  EXPECT_FALSE(r.refresh(t0 + seconds(9)).any());
  EXPECT_EQ(r.usable(), (Hosts{{"b", 1}}));
  auto c = r.refresh(t0 + seconds(10));
  EXPECT_EQ(c.added, (Names{"a"}));
  EXPECT_TRUE(c.removed.empty());
  EXPECT_EQ(r.usable(), (Hosts{{"a", 2}, {"b", 1}}));  // back in its first place
  EXPECT_EQ(r.next_cooldown_end(), std::nullopt);

  const auto t1 = t0 + seconds(100);
  EXPECT_EQ(r.blacklist("a", t1), t1 + seconds(20));
  EXPECT_EQ(r.refresh(t1 + seconds(20)).added, (Names{"a"}));

  const auto t2 = t0 + seconds(200);
  EXPECT_EQ(r.blacklist("a", t2), t2 + seconds(25));  // 40 capped at 25
  EXPECT_FALSE(r.refresh(t2 + seconds(24)).any());
  EXPECT_EQ(r.refresh(t2 + seconds(25)).added, (Names{"a"}));

  const auto t3 = t0 + seconds(300);
  EXPECT_EQ(r.blacklist("a", t3), t3 + seconds(25));
  // b's count is its own.
  EXPECT_EQ(r.blacklist("b", t3), t3 + seconds(10));
  EXPECT_EQ(r.next_cooldown_end(), t3 + seconds(10));
}

TEST(HostRegistryTest, FractionalAndManyCooldownsStayExactAndCapped) {
  HostRegistry r(std::make_pair(0.5, 3600.0));
  r.update({{"a", 1}}, t0);
  auto t = t0;
  EXPECT_EQ(r.blacklist("a", t), t + std::chrono::milliseconds(500));
  for (int i = 0; i < 2000; ++i) {  // far past where 2^n overflows a double
    t += std::chrono::hours(2);
    r.refresh(t);
    r.blacklist("a", t);
  }
  t += std::chrono::hours(2);
  r.refresh(t);
  EXPECT_EQ(r.blacklist("a", t), t + seconds(3600));
}

TEST(HostRegistryTest, FailingAgainWhileOutDoesNotDoubleTheCooldown) {
  HostRegistry r(std::make_pair(10.0, 1000.0));
  r.update({{"a", 4}}, t0);
  EXPECT_EQ(r.blacklist("a", t0), t0 + seconds(10));
  // Another worker on the same host reports its failure a moment later.
  EXPECT_EQ(r.blacklist("a", t0 + seconds(1)), t0 + seconds(10));
  EXPECT_EQ(r.refresh(t0 + seconds(10)).added, (Names{"a"}));
  EXPECT_EQ(r.blacklist("a", t0 + seconds(50)), t0 + seconds(70));  // the second: 20 s
}

TEST(HostRegistryTest, UsableFollowsTheLastRefreshNotTheClock) {
  HostRegistry r(std::make_pair(10.0, 10.0));
  r.update({{"a", 1}}, t0);
  r.blacklist("a", t0);
  // The cooldown is over by the clock, but the driver has not been told yet:
  // usable() waits for the refresh() that reports a as added.
  EXPECT_FALSE(r.is_blacklisted("a", t0 + seconds(11)));
  EXPECT_TRUE(r.usable().empty());
  EXPECT_EQ(r.refresh(t0 + seconds(11)).added, (Names{"a"}));
  EXPECT_EQ(r.usable(), (Hosts{{"a", 1}}));
}

TEST(HostRegistryTest, CooldownEndingWhileTheHostIsGoneAddsNothing) {
  HostRegistry r(std::make_pair(10.0, 100.0));
  r.update({{"a", 1}, {"b", 1}}, t0);
  r.blacklist("a", t0);
  EXPECT_FALSE(r.update({{"b", 1}}, t0 + seconds(1)).any());
  EXPECT_EQ(r.next_cooldown_end(), std::nullopt);  // a is not discovered: nothing to wait for
  EXPECT_FALSE(r.refresh(t0 + seconds(20)).any());
  // Back in discovery after its cooldown: usable again, in its old place.
  EXPECT_EQ(r.update({{"b", 1}, {"a", 3}}, t0 + seconds(30)).added, (Names{"a"}));
  EXPECT_EQ(r.usable(), (Hosts{{"a", 3}, {"b", 1}}));
}

TEST(HostRegistryTest, HostBlacklistedBeforeDiscoveryWaitsOutItsCooldown) {
  HostRegistry r(std::make_pair(10.0, 100.0));
  EXPECT_EQ(r.blacklist("z", t0), t0 + seconds(10));
  EXPECT_FALSE(r.update({{"z", 2}}, t0 + seconds(1)).any());
  EXPECT_EQ(r.next_cooldown_end(), t0 + seconds(10));
  EXPECT_EQ(r.refresh(t0 + seconds(10)).added, (Names{"z"}));
  EXPECT_EQ(r.usable(), (Hosts{{"z", 2}}));
}

TEST(HostRegistryTest, NextCooldownEndIsTheEarliestWaitingHost) {
  HostRegistry r(std::make_pair(10.0, 100.0));
  EXPECT_EQ(r.next_cooldown_end(), std::nullopt);
  r.update({{"a", 1}, {"b", 1}, {"c", 1}}, t0);
  r.blacklist("a", t0 + seconds(5));  // until t0+15
  r.blacklist("b", t0 + seconds(2));  // until t0+12
  EXPECT_EQ(r.next_cooldown_end(), t0 + seconds(12));
  EXPECT_EQ(r.refresh(t0 + seconds(12)).added, (Names{"b"}));
  EXPECT_EQ(r.next_cooldown_end(), t0 + seconds(15));
  EXPECT_EQ(r.refresh(t0 + seconds(15)).added, (Names{"a"}));
  EXPECT_EQ(r.next_cooldown_end(), std::nullopt);
  EXPECT_EQ(r.usable(), (Hosts{{"a", 1}, {"b", 1}, {"c", 1}}));
}

TEST(HostRegistryTest, RejectsBadCooldownsAndBadHostLists) {
  for (auto bad : {std::make_pair(5.0, 1.0), std::make_pair(-1.0, 1.0),
                   std::make_pair(std::nan(""), 1.0), std::make_pair(1.0, HUGE_VAL)})
    EXPECT_NE(error_of([&] { HostRegistry r(bad); }).find("0 <= lo <= hi"), std::string::npos)
        << bad.first << "-" << bad.second;
  HostRegistry r(std::nullopt);
  EXPECT_EQ(error_of([&] { r.update({{"a", 1}, {"a", 2}}, t0); }), "host 'a' is listed twice");
  EXPECT_EQ(error_of([&] {
              r.update({{"a", 0}}, t0);
            }),
            "host 'a' has 0 slots; at least 1 is needed");
  EXPECT_TRUE(r.usable().empty());  // a rejected list changes nothing
}

}  // namespace
}  // namespace kolo::runner::elastic
