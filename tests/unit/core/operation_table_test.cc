// The operation table (src/core/operation_table.h): one entry per OpType in
// order (also a static_assert), and properties that only make sense together.
#include "core/operation_table.h"

#include <gtest/gtest.h>

#include <cctype>
#include <set>
#include <string>

namespace kolo::core {
namespace {

TEST(OperationTable, HasOneEntryPerOpTypeInOrder) {
  ASSERT_EQ(kOperations.size(), static_cast<size_t>(kNumOpTypes));
  for (int i = 0; i < kNumOpTypes; ++i) {
    auto op = static_cast<OpType>(i);
    EXPECT_EQ(operation_info(op).op, op) << i;
    EXPECT_EQ(op_type_name(op), operation_info(op).name) << i;
  }
}

TEST(OperationTable, NamesAndActivitiesAreUniqueAndMatch) {
  std::set<std::string_view> names;
  std::set<std::string_view> activities;
  for (const auto& operation : kOperations) {
    EXPECT_TRUE(names.insert(operation.name).second) << operation.name;
    EXPECT_TRUE(activities.insert(operation.activity).second) << operation.activity;
    // The timeline row is the name in capitals, as Horovod's timeline has it.
    std::string upper(operation.name);
    for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    EXPECT_EQ(operation.activity, upper);
  }
}

TEST(OperationTable, PropertiesAreConsistent) {
  for (const auto& operation : kOperations) {
    SCOPED_TRACE(std::string(operation.name));
    // Reducing, splitting, rooting, caching and fusing are about tensor data.
    if (!operation.moves_data) {
      EXPECT_FALSE(operation.reduces);
      EXPECT_EQ(operation.output, OutputBuffer::kNone);
      EXPECT_EQ(operation.first_dimension, FirstDimension::kAny);
      EXPECT_FALSE(operation.fusable);
      EXPECT_FALSE(operation.cacheable);
      EXPECT_FALSE(operation.has_root);
    } else {
      EXPECT_NE(operation.output, OutputBuffer::kNone);
      EXPECT_FALSE(operation.changes_process_sets);
    }
    // A fused buffer and a joined rank's zeros only make sense when the
    // result is a sum over ranks laid out like the input.
    if (operation.fusable || (operation.moves_data && operation.runs_on_joined_rank)) {
      EXPECT_TRUE(operation.reduces);
      EXPECT_EQ(operation.output, OutputBuffer::kCaller);
    }
  }
}

TEST(OperationTable, OpTypeNameOfAnUnknownValueSaysSo) {
  EXPECT_EQ(op_type_name(static_cast<OpType>(kNumOpTypes)), "unknown");
}

}  // namespace
}  // namespace kolo::core
