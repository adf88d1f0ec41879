#include "common/quoted_list.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace kolo {
namespace {

TEST(QuotedList, NoNamesIsEmpty) {
  EXPECT_EQ(quoted_list({}), "");
}

TEST(QuotedList, QuotesEveryNameUpToTheLimit) {
  const std::vector<std::string> one{"a"};
  const std::vector<std::string> four{"a", "b", "c", "d"};
  EXPECT_EQ(quoted_list(one), "'a'");
  EXPECT_EQ(quoted_list(four), "'a', 'b', 'c', 'd'");
}

TEST(QuotedList, CountsTheNamesLeftOut) {
  const std::vector<std::string> seven{"a", "b", "c", "d", "e", "f", "g"};
  EXPECT_EQ(quoted_list(seven), "'a', 'b', 'c', 'd' and 3 more");
  EXPECT_EQ(quoted_list(seven, 2), "'a', 'b' and 5 more");
  EXPECT_EQ(quoted_list(seven, 0), " and 7 more");
}

TEST(QuotedList, KeepsTheOrderItIsGiven) {
  const std::vector<std::string> names{"z", "a"};
  EXPECT_EQ(quoted_list(names), "'z', 'a'");
}

}  // namespace
}  // namespace kolo
