// The coordinator's decisions as pure logic: readiness in arrival order,
// groups, join, and the stall report.
#include "core/coordinator.h"

#include <gtest/gtest.h>

namespace kolo::core {
namespace {

using namespace std::chrono_literals;
using Clock = Coordinator::Clock;

Request req(const std::string& name, OpType op = OpType::kAllreduce) {
  Request r;
  r.op = op;
  r.name = name;
  r.shape = {4};
  return r;
}

Coordinator make(int size, StallSettings stall = {}) {
  return Coordinator(size, stall, [](int r) { return "rank " + std::to_string(r); });
}

std::vector<std::string> names(const ResponseList& list) {
  std::vector<std::string> out;
  for (const auto& r : list.responses) out.push_back(r.names.at(0));
  return out;
}

TEST(Coordinator, ReadyOnlyWhenEveryRankSubmittedInArrivalOrder) {
  auto c = make(2);
  auto now = Clock::now();
  c.add(0, {req("b"), req("a")}, now);
  EXPECT_TRUE(c.take_ready().responses.empty());
  c.add(1, {req("a")}, now);
  EXPECT_EQ(names(c.take_ready()), (std::vector<std::string>{"a"}));
  c.add(1, {req("b")}, now);
  EXPECT_EQ(names(c.take_ready()), (std::vector<std::string>{"b"}));
  EXPECT_FALSE(c.has_pending());
}

TEST(Coordinator, GroupWaitsForAllItsMembers) {
  auto c = make(2);
  auto now = Clock::now();
  auto member = [](const std::string& name) {
    Request r = req(name);
    r.group = "g0";
    r.group_size = 2;
    return r;
  };
  c.add(0, {member("g0"), member("g1")}, now);
  c.add(1, {member("g0")}, now);
  EXPECT_TRUE(c.take_ready().responses.empty());
  c.add(1, {member("g1")}, now);
  EXPECT_EQ(names(c.take_ready()), (std::vector<std::string>{"g0", "g1"}));
}

TEST(Coordinator, JoinedRankCountsAsReadyForAllreduceOnly) {
  auto c = make(3);
  auto now = Clock::now();
  c.add(2, {req("kolo.join", OpType::kJoin)}, now);
  c.add(0, {req("x"), req("y", OpType::kBroadcast)}, now);
  c.add(1, {req("x"), req("y", OpType::kBroadcast)}, now);
  ResponseList list = c.take_ready();
  ASSERT_EQ(list.responses.size(), 2u);
  EXPECT_EQ(list.responses[0].kind, Response::Kind::kRun);
  EXPECT_EQ(list.responses[1].kind, Response::Kind::kError);
  EXPECT_NE(list.responses[1].error.find("rank 2 has joined"), std::string::npos)
      << list.responses[1].error;
  // The refusal names the joined rank, whose join() fails with it, and
  // releases it: it has to join again.
  EXPECT_EQ(list.responses[1].values, (std::vector<int64_t>{2}));
  EXPECT_TRUE(list.joined.empty());
  EXPECT_FALSE(list.cacheable);
  c.add(0, {req("kolo.join", OpType::kJoin)}, now);
  c.add(1, {req("kolo.join", OpType::kJoin)}, now);
  EXPECT_TRUE(c.take_ready().responses.empty());
  c.add(2, {req("kolo.join", OpType::kJoin)}, now);
  list = c.take_ready();
  ASSERT_EQ(list.responses.size(), 1u);
  EXPECT_EQ(list.responses[0].op, OpType::kJoin);
  EXPECT_EQ(list.responses[0].values, (std::vector<int64_t>{2}));
  EXPECT_TRUE(list.joined.empty());
}

TEST(Coordinator, StallReportNamesMissingRanks) {
  auto c = make(3, {true, 10s, 30s});
  auto start = Clock::now();
  c.add(0, {req("w")}, start);
  c.add(2, {req("w")}, start);
  EXPECT_FALSE(c.check_stalls(start + 5s));
  auto warning = c.check_stalls(start + 11s);
  ASSERT_TRUE(warning);
  EXPECT_NE(warning->find("'w' (allreduce, waiting 11.0 s) is missing from rank 1"),
            std::string::npos)
      << *warning;
  EXPECT_FALSE(c.expire_stalled(start + 11s));
  EXPECT_FALSE(c.check_stalls(start + 12s)) << "warned again within the warning period";
}

TEST(Coordinator, PastTheShutdownTimeOnlyTheStalledTensorFails) {
  auto c = make(3, {true, 10s, 30s});
  auto start = Clock::now();
  c.add(0, {req("w")}, start);
  c.add(2, {req("w")}, start);
  c.add(1, {req("other")}, start + 20s);
  EXPECT_TRUE(c.expire_stalled(start + 31s));
  // A request that arrives once the tensor is marked fails with it.
  c.add(1, {req("w")}, start + 31s);
  ResponseList list = c.take_ready();
  ASSERT_EQ(list.responses.size(), 1u);
  const Response& failed = list.responses[0];
  EXPECT_EQ(failed.kind, Response::Kind::kError);
  EXPECT_EQ(failed.names, std::vector<std::string>{"w"});
  EXPECT_NE(failed.error.find("'w' (allreduce) was not submitted by rank 1 within 30 s"),
            std::string::npos)
      << failed.error;
  // 'other' has waited 11 s: it stays, and the coordinator goes on.
  EXPECT_TRUE(c.has_pending());
  EXPECT_FALSE(c.expire_stalled(start + 32s));
  c.add(0, {req("other")}, start + 32s);
  c.add(2, {req("other")}, start + 32s);
  EXPECT_EQ(names(c.take_ready()), (std::vector<std::string>{"other"}));
}

TEST(Coordinator, AStalledGroupMemberFailsItsWholeGroup) {
  auto c = make(2, {true, 1s, 2s});
  auto start = Clock::now();
  Request a = req("g.a"), b = req("g.b");
  a.group = b.group = "g";
  a.group_size = b.group_size = 2;
  c.add(0, {a, b}, start);
  c.add(1, {a}, start);
  EXPECT_TRUE(c.expire_stalled(start + 3s));
  ResponseList list = c.take_ready();
  ASSERT_EQ(list.responses.size(), 2u);
  for (const auto& response : list.responses) {
    EXPECT_EQ(response.kind, Response::Kind::kError);
    EXPECT_NE(response.error.find("'g.b'"), std::string::npos) << response.error;
  }
  EXPECT_FALSE(c.has_pending());
}

TEST(Coordinator, NoShutdownTimeNeverExpires) {
  auto c = make(2, {true, 1s, 0s});
  auto start = Clock::now();
  c.add(0, {req("w")}, start);
  EXPECT_FALSE(c.expire_stalled(start + 1000s));
  EXPECT_TRUE(c.take_ready().responses.empty());
}

TEST(Coordinator, AgeReportedByTheSubmitterCounts) {
  auto c = make(2, {true, 10s, 0s});
  auto now = Clock::now();
  Request old = req("late");
  old.age_us = 20'000'000;
  c.add(0, {old}, now);
  EXPECT_TRUE(c.check_stalls(now));
}

}  // namespace
}  // namespace kolo::core
