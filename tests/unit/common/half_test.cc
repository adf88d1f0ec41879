#include "common/half.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

namespace kolo {
namespace {

TEST(Float16, ExactValuesRoundTrip) {
  for (float v : {0.0f, -0.0f, 1.0f, -2.5f, 65504.0f, 6.103515625e-05f /* min normal */,
                  5.9604644775390625e-08f /* min subnormal */, 1000.5f}) {
    EXPECT_EQ(float16::from_float(v).to_float(), v) << v;
  }
}

TEST(Float16, EveryBitPatternRoundTrips) {
  for (uint32_t b = 0; b <= 0xffff; ++b) {
    float16 h = float16::from_bits(static_cast<uint16_t>(b));
    float f = h.to_float();
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(float16::from_float(f).to_float()));
      continue;
    }
    EXPECT_EQ(float16::from_float(f).bits, h.bits) << std::hex << b;
  }
}

TEST(Float16, RoundsToNearestEvenAndOverflows) {
  // 1 + 2^-11 lies halfway between 1 and the next half (1 + 2^-10): ties to even -> 1.
  EXPECT_EQ(float16::from_float(1.0f + std::ldexp(1.0f, -11)).to_float(), 1.0f);
  // Slightly above halfway rounds up.
  EXPECT_EQ(float16::from_float(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)).to_float(),
            1.0f + std::ldexp(1.0f, -10));
  EXPECT_TRUE(std::isinf(float16::from_float(70000.0f).to_float()));
  EXPECT_EQ(float16::from_float(1e-10f).to_float(), 0.0f);
  EXPECT_TRUE(std::isnan(float16::from_float(std::numeric_limits<float>::quiet_NaN()).to_float()));
}

TEST(BFloat16, RoundsToNearestEven) {
  EXPECT_EQ(bfloat16::from_float(1.0f).to_float(), 1.0f);
  EXPECT_EQ(bfloat16::from_float(3.0f).to_float(), 3.0f);
  // 1 + 2^-8 is halfway between 1 and 1 + 2^-7: ties to even -> 1.
  EXPECT_EQ(bfloat16::from_float(1.0f + std::ldexp(1.0f, -8)).to_float(), 1.0f);
  EXPECT_EQ(bfloat16::from_float(1.0f + 3 * std::ldexp(1.0f, -8)).to_float(),
            1.0f + std::ldexp(1.0f, -6));
  EXPECT_TRUE(std::isnan(bfloat16::from_float(std::numeric_limits<float>::quiet_NaN()).to_float()));
  EXPECT_TRUE(std::isinf(bfloat16::from_float(std::numeric_limits<float>::infinity()).to_float()));
}

}  // namespace
}  // namespace kolo
