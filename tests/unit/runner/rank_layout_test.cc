// Rank placement must match Horovod's, so scripts that use local_rank for
// the GPU and cross_rank for sharding behave the same under kolorun.
#include "runner/rank_layout.h"

#include <gtest/gtest.h>

#include "common/error.h"

namespace kolo::runner {
namespace {

// {host, rank, size, local_rank, local_size, cross_rank, cross_size}
using Slots = std::vector<RankSlot>;

TEST(RankLayoutTest, EvenHostsFillInOrder) {
  EXPECT_EQ(assign_ranks({{"a", 2}, {"b", 2}}, 4), (Slots{{"a", 0, 4, 0, 2, 0, 2},
                                                          {"a", 1, 4, 1, 2, 0, 2},
                                                          {"b", 2, 4, 0, 2, 1, 2},
                                                          {"b", 3, 4, 1, 2, 1, 2}}));
}

TEST(RankLayoutTest, UnevenSlotsGiveHorovodsCrossRanks) {
  // Local rank 0 exists on all three hosts, local rank 1 on a and c, 2 only on c.
  EXPECT_EQ(assign_ranks({{"a", 2}, {"b", 1}, {"c", 3}}, 6), (Slots{{"a", 0, 6, 0, 2, 0, 3},
                                                                    {"a", 1, 6, 1, 2, 0, 2},
                                                                    {"b", 2, 6, 0, 1, 1, 3},
                                                                    {"c", 3, 6, 0, 3, 2, 3},
                                                                    {"c", 4, 6, 1, 3, 1, 2},
                                                                    {"c", 5, 6, 2, 3, 0, 1}}));
}

TEST(RankLayoutTest, FewerRanksThanSlotsLeaveLaterHostsEmpty) {
  EXPECT_EQ(assign_ranks({{"a", 4}, {"b", 4}}, 3),
            (Slots{{"a", 0, 3, 0, 3, 0, 1}, {"a", 1, 3, 1, 3, 0, 1}, {"a", 2, 3, 2, 3, 0, 1}}));
  EXPECT_EQ(assign_ranks({{"a", 2}, {"b", 2}}, 3).back(), (RankSlot{"b", 2, 3, 0, 1, 1, 2}));
}

TEST(RankLayoutTest, OneLocalHost) {
  Slots slots = assign_ranks({{"localhost", 8}}, 8);
  ASSERT_EQ(slots.size(), 8u);
  for (int r = 0; r < 8; ++r) EXPECT_EQ(slots[r], (RankSlot{"localhost", r, 8, r, 8, 0, 1}));
}

TEST(RankLayoutTest, RejectsZeroAndTooManyRanks) {
  EXPECT_THROW(assign_ranks({{"a", 2}}, 0), InvalidArgument);
  EXPECT_THROW(assign_ranks({{"a", 2}}, -1), InvalidArgument);
  try {
    assign_ranks({{"a", 2}, {"b", 1}}, 4);
    FAIL() << "-np above the slots was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_STREQ(e.what(), "-np 4 is more than the 3 slots of the hosts given (2 hosts)");
  }
  // Found by fuzz_launcher_input: -np 666666666 on localhost built the
  // whole layout before anything could object.
  try {
    assign_ranks({{"localhost", 666666666}}, 666666666);
    FAIL() << "a huge -np was accepted";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("above the limit"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace kolo::runner
