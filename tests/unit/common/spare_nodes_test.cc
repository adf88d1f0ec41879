// SpareNodes: nodes of a node-based container kept for the next element
// (common/spare_nodes.h).
#include "common/spare_nodes.h"

#include <gtest/gtest.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

namespace kolo {
namespace {

TEST(SpareNodes, AnErasedElementsNodeHoldsTheNextOne) {
  std::unordered_map<std::string, int> map{{"a", 1}};
  SpareNodes<std::unordered_map<std::string, int>> spare;
  const auto* node_of_a = &*map.find("a");
  EXPECT_TRUE(spare.erase(map, std::string("a")));
  EXPECT_TRUE(map.empty());
  EXPECT_EQ(spare.size(), 1u);
  EXPECT_FALSE(spare.erase(map, std::string("a")));  // nothing left to take

  auto node = spare.take();
  ASSERT_FALSE(node.empty());
  EXPECT_EQ(spare.size(), 0u);
  node.key() = "b";
  node.mapped() = 2;
  auto inserted = map.insert(std::move(node));
  ASSERT_TRUE(inserted.inserted);
  // The same memory, now holding "b".
  EXPECT_EQ(&*inserted.position, node_of_a);
  EXPECT_EQ(map.at("b"), 2);
}

TEST(SpareNodes, TakeWithNoneSpareGivesAnEmptyNode) {
  SpareNodes<std::unordered_set<std::string>> spare;
  EXPECT_TRUE(spare.take().empty());
}

TEST(SpareNodes, ErasesByIteratorAndKeepsNoMoreThanItsLimit) {
  std::unordered_set<int> set{1, 2, 3};
  SpareNodes<std::unordered_set<int>> spare(2);
  spare.erase_at(set, set.find(1));
  spare.erase_at(set, set.find(2));
  spare.erase_at(set, set.find(3));  // over the limit: freed
  EXPECT_TRUE(set.empty());
  EXPECT_EQ(spare.size(), 2u);
  spare.keep({});  // an empty node is not kept
  EXPECT_EQ(spare.size(), 2u);
}

}  // namespace
}  // namespace kolo
