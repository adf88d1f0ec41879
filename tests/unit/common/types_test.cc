#include "kolo/types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kolo {
namespace {

TEST(Types, NamesRoundTrip) {
  for (int i = 0; i < kNumDataTypes; ++i) {
    auto t = static_cast<DataType>(i);
    EXPECT_EQ(parse_dtype(dtype_name(t)), t);
  }
  for (int i = 0; i < kNumReduceOps; ++i) {
    auto op = static_cast<ReduceOp>(i);
    EXPECT_EQ(parse_reduce_op(reduce_op_name(op)), op);
  }
  EXPECT_EQ(parse_dtype("complex64"), std::nullopt);
  EXPECT_EQ(parse_reduce_op("xor"), std::nullopt);
}

TEST(Types, Sizes) {
  EXPECT_EQ(dtype_size(DataType::kBFloat16), 2u);
  EXPECT_EQ(dtype_size(DataType::kInt64), 8u);
  EXPECT_EQ(dtype_size(DataType::kBool), 1u);
}

TEST(Types, OpSupport) {
  EXPECT_FALSE(reduce_op_supported(ReduceOp::kBitAnd, DataType::kFloat32));
  EXPECT_TRUE(reduce_op_supported(ReduceOp::kBitOr, DataType::kBool));
  EXPECT_FALSE(reduce_op_supported(ReduceOp::kAverage, DataType::kBool));
  EXPECT_TRUE(reduce_op_supported(ReduceOp::kProduct, DataType::kFloat16));
}

TEST(Types, ReductionProblemNamesWhatIsWrong) {
  EXPECT_EQ(reduction_problem({ReduceOp::kAverage, 0.5, 2.0}, DataType::kFloat32), "");
  EXPECT_EQ(reduction_problem({ReduceOp::kBitAnd}, DataType::kFloat32),
            "reduce op band is not defined for float32");
  EXPECT_EQ(reduction_problem({ReduceOp::kSum, std::nan("")}, DataType::kFloat32),
            "prescale factor nan is not finite");
  EXPECT_EQ(reduction_problem({ReduceOp::kSum, 1.0, std::numeric_limits<double>::infinity()},
                              DataType::kInt32),
            "postscale factor inf is not finite");
}

}  // namespace
}  // namespace kolo
