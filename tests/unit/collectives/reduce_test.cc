// The reduction and scaling kernels against the serial reference, for every
// dtype x op, plus the corner cases the spec names: fp16/bf16 rounding, bool
// as nonzero-is-true, integer wraparound, integer rounding of scales.
#include "collectives/reduce/reduce.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "collectives/reduce/kernels.h"
#include "common/error.h"
#include "common/half.h"
#include "reference.h"

namespace kolo::testing {
namespace {

std::string name(DataType type, ReduceOp op) {
  return std::string(dtype_name(type)) + " " + std::string(reduce_op_name(op));
}

// Arbitrary values: full-range integers (so sums and products overflow),
// fractional floats (so 16-bit results round), bool bytes other than 0/1.
Bytes random_values(DataType type, size_t count, uint64_t salt) {
  if (!is_floating(type)) return make_bytes(count * dtype_size(type), 0, salt);
  const Bytes bits = make_bytes(count * 4, 0, salt);
  Bytes data(count * dtype_size(type));
  for (size_t i = 0; i < count; ++i) {
    uint32_t h;
    std::memcpy(&h, &bits[i * 4], 4);
    store_float(type, data, i, (static_cast<double>(h % 200001) - 100000.0) / 97.0);
  }
  return data;
}

Bytes expected_combination(DataType type, ReduceOp op, const Bytes& a, const Bytes& b) {
  Bytes out = a;
  for (size_t i = 0; i < element_count(type, a); ++i) reference_combine(type, op, out, b, i);
  return out;
}

TEST(Reduce, EveryTypeAndOpMatchesReference) {
  for (DataType type : kAllTypes) {
    for (ReduceOp op : kAllOps) {
      if (!reduce_op_supported(op, type)) continue;
      for (size_t count : {size_t{0}, size_t{1}, size_t{3}, size_t{17}, size_t{1037}}) {
        const Bytes a = random_values(type, count, 1), b = random_values(type, count, 2);
        const Bytes expected = expected_combination(type, op, a, b);
        SCOPED_TRACE(name(type, op) + " count " + std::to_string(count));

        Bytes inout = a;
        reduce::reduce_into(inout.data(), b.data(), count, type, op);
        EXPECT_EQ(compare(type, expected, inout), "");

        Bytes out(a.size());
        reduce::reduce(out.data(), a.data(), b.data(), count, type, op);
        EXPECT_EQ(compare(type, expected, out), "");

        Bytes aliased_first = a, aliased_second = b;
        reduce::reduce(aliased_first.data(), aliased_first.data(), b.data(), count, type, op);
        reduce::reduce(aliased_second.data(), a.data(), aliased_second.data(), count, type, op);
        EXPECT_EQ(compare(type, expected, aliased_first), "");
        EXPECT_EQ(compare(type, expected, aliased_second), "");
      }
    }
  }
}

TEST(Reduce, MisalignedStartsAndEveryTailLength) {
  // Vectorized loops have a peeled head and a scalar tail; exercise both.
  for (DataType type :
       {DataType::kFloat32, DataType::kFloat16, DataType::kInt8, DataType::kInt64}) {
    const Bytes a = random_values(type, 80, 3), b = random_values(type, 80, 4);
    const size_t e = dtype_size(type);
    for (size_t start = 0; start < 5; ++start) {
      for (size_t count = 0; start + count <= 80; count += 3) {
        Bytes inout = a;
        reduce::reduce_into(inout.data() + start * e, b.data() + start * e, count, type,
                            ReduceOp::kSum);
        Bytes expected = a;
        for (size_t i = start; i < start + count; ++i)
          reference_combine(type, ReduceOp::kSum, expected, b, i);
        EXPECT_EQ(compare(type, expected, inout), "")
            << dtype_name(type) << " start " << start << " count " << count;
      }
    }
  }
}

TEST(Reduce, UndefinedOpsThrowInvalidArgument) {
  float f[2] = {1, 2};
  uint8_t flag[2] = {1, 0};
  EXPECT_THROW(reduce::reduce_into(f, f + 1, 1, DataType::kFloat32, ReduceOp::kBitAnd),
               InvalidArgument);
  EXPECT_THROW(reduce::reduce_into(f, f + 1, 1, DataType::kFloat64, ReduceOp::kBitOr),
               InvalidArgument);
  EXPECT_THROW(reduce::reduce_into(flag, flag + 1, 1, DataType::kBool, ReduceOp::kAverage),
               InvalidArgument);
  EXPECT_THROW(reduce::reduce_into(f, f + 1, 1, static_cast<DataType>(42), ReduceOp::kSum),
               InvalidArgument);
}

TEST(Reduce, Float16AddsInFloatAndRoundsOnceToNearestEven) {
  auto sum = [](float x, float y) {
    float16 a = float16::from_float(x), b = float16::from_float(y);
    reduce::reduce_into(&a, &b, 1, DataType::kFloat16, ReduceOp::kSum);
    return a.to_float();
  };
  EXPECT_EQ(sum(2048, 1), 2048);  // 2049 is a tie between 2048 and 2050: even
  EXPECT_EQ(sum(2048, 3), 2052);  // 2051: tie, 2052 is even
  EXPECT_EQ(sum(0.1f, 0.2f), float16::from_float(float16::from_float(0.1f).to_float() +
                                                 float16::from_float(0.2f).to_float())
                                 .to_float());
  EXPECT_TRUE(std::isinf(sum(65504, 65504)));
  EXPECT_EQ(sum(6e-8f, 6e-8f), float16::from_bits(2).to_float());  // subnormals
}

TEST(Reduce, BranchFreeFloat16ConversionsMatchHalfH) {
  using reduce::kernels::Float16Type;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float expected = float16::from_bits(static_cast<uint16_t>(bits)).to_float();
    ASSERT_EQ(float_bits(Float16Type::load(static_cast<uint16_t>(bits))), float_bits(expected))
        << bits;
  }
  // Every float near a half, near a midpoint between halves, and a stride
  // through all other bit patterns (all 2^32 were checked once offline).
  auto check = [](uint32_t u) {
    ASSERT_EQ(Float16Type::store(bits_float(u)), float16::from_float(bits_float(u)).bits)
        << std::hex << u;
  };
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const uint32_t exact = float_bits(float16::from_bits(static_cast<uint16_t>(bits)).to_float());
    const uint32_t midpoint = exact + (1u << 12);  // halfway to the next half (normal range)
    for (uint32_t delta = 0; delta < 3; ++delta) {
      check(exact + delta), check(exact - delta), check(midpoint + delta), check(midpoint - delta);
    }
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 65521) check(static_cast<uint32_t>(u));
}

TEST(Reduce, BranchFreeBFloat16ConversionsMatchHalfH) {
  using reduce::kernels::BFloat16Type;
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const float expected = bfloat16::from_bits(static_cast<uint16_t>(bits)).to_float();
    ASSERT_EQ(float_bits(BFloat16Type::load(static_cast<uint16_t>(bits))), float_bits(expected))
        << bits;
  }
  auto check = [](uint32_t u) {
    ASSERT_EQ(BFloat16Type::store(bits_float(u)), bfloat16::from_float(bits_float(u)).bits)
        << std::hex << u;
  };
  // Each bfloat16, the midpoints above it (ties), their neighbours, and a
  // stride through all other floats (NaN payloads included).
  for (uint32_t high = 0; high <= 0xffff; ++high) {
    for (uint32_t low : {0x0000u, 0x0001u, 0x7fffu, 0x8000u, 0x8001u, 0xffffu})
      check(high << 16 | low);
  }
  for (uint64_t u = 0; u <= 0xffffffffu; u += 65521) check(static_cast<uint32_t>(u));
}

TEST(Reduce, BFloat16AddsInFloatAndRoundsOnceToNearestEven) {
  auto sum = [](float x, float y) {
    bfloat16 a = bfloat16::from_float(x), b = bfloat16::from_float(y);
    reduce::reduce_into(&a, &b, 1, DataType::kBFloat16, ReduceOp::kSum);
    return a.to_float();
  };
  EXPECT_EQ(sum(256, 1), 256);  // 257: tie, 256 is even
  EXPECT_EQ(sum(256, 3), 260);  // 259: tie between 258 and 260
  EXPECT_EQ(sum(1, 1.0f / 512), 1);
}

TEST(Reduce, BoolTreatsNonzeroAsTrueAndProducesZeroOrOne) {
  const uint8_t a[] = {0, 2, 255, 0, 7};
  const uint8_t b[] = {0, 0, 3, 9, 128};
  struct Case {
    ReduceOp op;
    uint8_t expected[5];
  };
  for (const Case& c :
       {Case{ReduceOp::kSum, {0, 1, 1, 1, 1}}, Case{ReduceOp::kMax, {0, 1, 1, 1, 1}},
        Case{ReduceOp::kBitOr, {0, 1, 1, 1, 1}}, Case{ReduceOp::kProduct, {0, 0, 1, 0, 1}},
        Case{ReduceOp::kMin, {0, 0, 1, 0, 1}}, Case{ReduceOp::kBitAnd, {0, 0, 1, 0, 1}}}) {
    uint8_t out[5];
    reduce::reduce(out, a, b, 5, DataType::kBool, c.op);
    EXPECT_EQ(std::memcmp(out, c.expected, 5), 0) << reduce_op_name(c.op);
  }
}

TEST(Reduce, IntegerSumAndProductWrapAround) {
  int8_t i8[] = {127, -128, 100};
  const int8_t i8b[] = {1, -1, 100};
  reduce::reduce_into(i8, i8b, 3, DataType::kInt8, ReduceOp::kSum);
  EXPECT_EQ(i8[0], -128);
  EXPECT_EQ(i8[1], 127);
  EXPECT_EQ(i8[2], -56);

  uint8_t u8[] = {200, 16};
  const uint8_t u8b[] = {2, 16};
  reduce::reduce_into(u8, u8b, 2, DataType::kUInt8, ReduceOp::kProduct);
  EXPECT_EQ(u8[0], 144);
  EXPECT_EQ(u8[1], 0);

  int32_t i32[] = {std::numeric_limits<int32_t>::max(), 65536};
  const int32_t i32b[] = {1, 65536};
  reduce::reduce_into(i32, i32b, 2, DataType::kInt32, ReduceOp::kSum);
  EXPECT_EQ(i32[0], std::numeric_limits<int32_t>::min());
  reduce::reduce_into(i32 + 1, i32b + 1, 1, DataType::kInt32, ReduceOp::kProduct);
  EXPECT_EQ(i32[1], 0);  // (2^16 + 2^16) * 2^16 = 2^33 wraps to 0

  int64_t i64[] = {std::numeric_limits<int64_t>::min(), int64_t{1} << 40};
  const int64_t i64b[] = {-1, int64_t{1} << 30};
  reduce::reduce_into(i64, i64b, 2, DataType::kInt64, ReduceOp::kSum);
  EXPECT_EQ(i64[0], std::numeric_limits<int64_t>::max());
  reduce::reduce_into(i64 + 1, i64b + 1, 1, DataType::kInt64, ReduceOp::kProduct);
  EXPECT_EQ(i64[1], int64_t{1} << 60);  // (2^40 + 2^30) * 2^30 = 2^70 + 2^60 wraps to 2^60
}

TEST(Scale, EveryTypeMatchesReference) {
  for (DataType type : kAllTypes) {
    for (double factor : {1.0, 0.5, 2.0, -3.0, 1.0 / 3, 0.0, 1e30}) {
      const Bytes input = random_values(type, 301, 5);
      Bytes expected = input, actual = input;
      reference_scale(type, expected, factor);
      reduce::scale(actual.data(), 301, type, factor);
      EXPECT_EQ(compare(type, expected, actual), "") << dtype_name(type) << " x" << factor;
    }
  }
}

TEST(Scale, IntegersTruncateTowardZeroAndSaturate) {
  int32_t v[] = {75, 71, -5, 3, 1000000000};
  reduce::scale(v, 5, DataType::kInt32, 0.5);
  EXPECT_EQ(v[0], 37);  // 37.5 -> 37 (Horovod's truncation, not 38)
  EXPECT_EQ(v[1], 35);  // 35.5 -> 35
  EXPECT_EQ(v[2], -2);  // -2.5 -> -2 (toward zero)
  EXPECT_EQ(v[3], 1);   // 1.5 -> 1
  int16_t shorts[] = {999, -999, 30000};
  reduce::scale(shorts, 2, DataType::kInt16, 0.1);
  EXPECT_EQ(shorts[0], 99);  // 99.9 -> 99
  EXPECT_EQ(shorts[1], -99);
  reduce::scale(shorts + 2, 1, DataType::kInt16, 2.0);
  EXPECT_EQ(shorts[2], std::numeric_limits<int16_t>::max());
  reduce::scale(v + 4, 1, DataType::kInt32, 8.0);
  EXPECT_EQ(v[4], std::numeric_limits<int32_t>::max());

  int8_t small[] = {100, -100};
  reduce::scale(small, 2, DataType::kInt8, 2.0);
  EXPECT_EQ(small[0], 127);
  EXPECT_EQ(small[1], -128);
  uint8_t unsigned_bytes[] = {10};
  reduce::scale(unsigned_bytes, 1, DataType::kUInt8, -1.0);
  EXPECT_EQ(unsigned_bytes[0], 0);
  int64_t big[] = {std::numeric_limits<int64_t>::max() / 2};
  reduce::scale(big, 1, DataType::kInt64, 4.0);
  EXPECT_EQ(big[0], std::numeric_limits<int64_t>::max());
}

TEST(Scale, SixteenBitFloatsScaleInFloatAndRoundOnce) {
  float16 h = float16::from_float(3.0f);
  reduce::scale(&h, 1, DataType::kFloat16, 1.0 / 3);
  EXPECT_EQ(h.to_float(), float16::from_float(3.0f * static_cast<float>(1.0 / 3)).to_float());
  bfloat16 b = bfloat16::from_float(257.0f);
  reduce::scale(&b, 1, DataType::kBFloat16, 0.5);
  EXPECT_EQ(b.to_float(), 128.0f);  // 257 is stored as 256 in bfloat16
}

}  // namespace
}  // namespace kolo::testing
