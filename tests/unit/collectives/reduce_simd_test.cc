// Every SIMD level of the reduction kernels against the portable ones, byte
// for byte: every dtype x op, lengths around the vector widths, misaligned
// pointers, and inputs full of special values (NaN with payloads, infinities,
// subnormals, the largest finite values). Levels the CPU lacks are skipped.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "collectives/reduce/reduce.h"
#include "collectives/reduce/simd.h"
#include "common/error.h"
#include "reference.h"

namespace kolo::testing {
namespace {

using reduce::simd::Kernels;
using reduce::simd::Level;

constexpr size_t kCounts[] = {0, 1, 7, 15, 16, 17, 31, 33, 1000, (size_t{1} << 16) + 3};

// Bit patterns that take the unusual paths of the conversions and operators.
constexpr uint16_t kHalfSpecials[] = {0x0000, 0x8000,          // +-0
                                      0x0001, 0x8001, 0x03ff,  // subnormals (smallest, largest)
                                      0x0400, 0x8400,          // smallest normals
                                      0x7bff, 0xfbff,          // +-65504, the largest finite
                                      0x7c00, 0xfc00,          // +-inf
                                      0x7e00, 0xfe00,          // quiet NaN, both signs
                                      0x7c01, 0xfd55,          // signalling NaN, NaN with a payload
                                      0x7fff, 0x3c00, 0xbc00, 0x3555, 0x0200};
constexpr uint16_t kBFloat16Specials[] = {0x0000, 0x8000, 0x0001, 0x007f, 0x0080, 0x7f7f,
                                          0xff7f, 0x7f80, 0xff80, 0x7fc0, 0xffc0, 0x7f81,
                                          0xffab, 0x3f80, 0xbf80, 0x3eab};
constexpr uint32_t kFloatSpecials[] = {
    0x00000000, 0x80000000, 0x00000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x7f800000,
    0xff800000, 0x7fc00000, 0xffc00000, 0x7f800001, 0x7fc12345, 0x3f800000, 0x38800000, 0x477ff000};
constexpr uint64_t kDoubleSpecials[] = {0,
                                        0x8000000000000000,
                                        1,
                                        0x7fefffffffffffff,
                                        0x7ff0000000000000,
                                        0xfff0000000000000,
                                        0x7ff8000000000000,
                                        0xfff8000000000000,
                                        0x7ff0000000000001,
                                        0x3ff0000000000000};

template <typename T, size_t N>
void put_special(Bytes& data, size_t i, const T (&specials)[N], uint64_t r) {
  const T v = specials[r % N];
  std::memcpy(data.data() + i * sizeof(T), &v, sizeof(T));
}

// Random bit patterns (every float class turns up for 16-bit types), with one
// element in four replaced by a special value.
Bytes mixed_values(DataType type, size_t count, uint64_t seed) {
  const size_t e = dtype_size(type);
  Bytes data(count * e);
  std::mt19937_64 rng(seed);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = rng();
    std::memcpy(data.data() + i * e, &r, e);
    if ((r >> 60) % 4 != 0) continue;
    const uint64_t pick = r >> 32;
    switch (type) {
      case DataType::kFloat16:
        put_special(data, i, kHalfSpecials, pick);
        break;
      case DataType::kBFloat16:
        put_special(data, i, kBFloat16Specials, pick);
        break;
      case DataType::kFloat32:
        put_special(data, i, kFloatSpecials, pick);
        break;
      case DataType::kFloat64:
        put_special(data, i, kDoubleSpecials, pick);
        break;
      default:
        std::memset(data.data() + i * e, (pick & 1) ? 0xff : 0, e);
        break;
    }
  }
  return data;
}

// `count` elements starting `offset` elements past a 64-byte boundary.
class Buffer {
 public:
  Buffer(const Bytes& content, size_t offset) : storage_(content.size() + 128) {
    auto base = reinterpret_cast<uintptr_t>(storage_.data());
    data_ = storage_.data() + ((64 - base % 64) % 64) + offset;
    if (!content.empty()) std::memcpy(data_, content.data(), content.size());
    size_ = content.size();
  }
  uint8_t* data() { return data_; }
  Bytes bytes() const { return Bytes(data_, data_ + size_); }

 private:
  Bytes storage_;
  uint8_t* data_;
  size_t size_;
};

bool is_nan(DataType type, const uint8_t* element) {
  uint64_t bits = 0;
  std::memcpy(&bits, element, dtype_size(type));
  switch (type) {
    case DataType::kFloat16:
      return (bits & 0x7fff) > 0x7c00;
    case DataType::kBFloat16:
      return (bits & 0x7fff) > 0x7f80;
    case DataType::kFloat32:
      return (bits & 0x7fffffff) > 0x7f800000;
    case DataType::kFloat64:
      return (bits & 0x7fffffffffffffff) > 0x7ff0000000000000;
    default:
      return false;
  }
}

// "" when equal byte for byte, else the first differing element. One
// difference is allowed: where both operands of an addition or a
// multiplication are NaN, IEEE 754 leaves open which one the result carries,
// x86 returns the first operand, and the compiler may swap the operands of
// these commutative operations (it does, differently at different levels);
// so there the result need only be a NaN (of the same sign and payload rules:
// float16 keeps only a sign). `both_nan(i)` says whether that applies to i.
template <typename BothNaN>
std::string first_difference(DataType type, const Bytes& expected, const Bytes& actual,
                             BothNaN both_nan) {
  if (expected.size() != actual.size()) return "sizes differ";
  const size_t e = dtype_size(type);
  for (size_t i = 0; i < expected.size(); i += e) {
    if (std::memcmp(&expected[i], &actual[i], e) == 0) continue;
    if (both_nan(i / e) && is_nan(type, &expected[i]) && is_nan(type, &actual[i])) continue;
    uint64_t x = 0, y = 0;
    std::memcpy(&x, &expected[i], e);
    std::memcpy(&y, &actual[i], e);
    return fmt::format("element {}: expected bits {:#x}, got {:#x}", i / e, x, y);
  }
  return "";
}

std::string first_difference(DataType type, const Bytes& expected, const Bytes& actual) {
  return first_difference(type, expected, actual, [](size_t) { return false; });
}

class ReduceSimd : public ::testing::TestWithParam<Level> {
 protected:
  void SetUp() override {
    if (!reduce::simd::cpu_supports(GetParam()))
      GTEST_SKIP() << "this CPU cannot run the " << reduce::simd::level_name(GetParam())
                   << " kernels";
    level_ = reduce::simd::kernels_for(GetParam());
    portable_ = reduce::simd::kernels_for(Level::kPortable);
    ASSERT_NE(level_, nullptr);
    ASSERT_NE(portable_, nullptr);
  }

  // a (op) b through both kernels of both levels, with the operands `shift`
  // elements past alignment (out/inout, a, b shifted by shift[0..2]).
  void check_op(DataType type, ReduceOp op, const Bytes& a, const Bytes& b,
                const size_t (&shift)[3]) {
    const size_t count = a.size() / dtype_size(type), e = dtype_size(type);
    const bool commutes = op == ReduceOp::kSum || op == ReduceOp::kProduct;
    auto both_nan = [&](size_t i) {
      return commutes && is_nan(type, &a[i * e]) && is_nan(type, &b[i * e]);
    };
    Buffer expected(a, shift[0] * e), actual(a, shift[0] * e);
    Buffer in(b, shift[2] * e);
    portable_->reduce_into(expected.data(), in.data(), count, type, op);
    level_->reduce_into(actual.data(), in.data(), count, type, op);
    EXPECT_EQ(first_difference(type, expected.bytes(), actual.bytes(), both_nan), "")
        << "reduce_into";

    Buffer lhs(a, shift[1] * e), out(Bytes(a.size()), shift[0] * e);
    level_->combine(out.data(), lhs.data(), in.data(), count, type, op);
    EXPECT_EQ(first_difference(type, expected.bytes(), out.bytes(), both_nan), "") << "combine";
  }

  const Kernels* level_ = nullptr;
  const Kernels* portable_ = nullptr;
};

TEST_P(ReduceSimd, EveryTypeOpLengthAndAlignmentMatchesPortable) {
  constexpr size_t kShifts[][3] = {{0, 0, 0}, {1, 1, 1}, {0, 1, 1}, {1, 0, 0}};
  for (DataType type : kAllTypes) {
    for (ReduceOp op : kAllOps) {
      if (!reduce_op_supported(op, type) || op == ReduceOp::kAverage) continue;  // average is sum
      for (size_t count : kCounts) {
        const Bytes a = mixed_values(type, count, count * 31 + 1);
        const Bytes b = mixed_values(type, count, count * 31 + 2);
        for (const auto& shift : kShifts) {
          SCOPED_TRACE(fmt::format("{} {} count {} shifts {}/{}/{}", dtype_name(type),
                                   reduce_op_name(op), count, shift[0], shift[1], shift[2]));
          check_op(type, op, a, b, shift);
          if (HasFailure()) return;  // one report per run, not thousands
        }
      }
    }
  }
}

TEST_P(ReduceSimd, ScaleMatchesPortable) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  for (DataType type : kAllTypes) {
    for (double factor : {1.0, 0.5, -3.0, 1.0 / 3, 0.0, -0.0, 1e30, 1e-30, inf, nan}) {
      for (size_t count : kCounts) {
        for (size_t shift : {0, 1}) {
          SCOPED_TRACE(
              fmt::format("{} x{} count {} shift {}", dtype_name(type), factor, count, shift));
          const Bytes input = mixed_values(type, count, count + 5);
          Buffer expected(input, shift * dtype_size(type)), actual(input, shift * dtype_size(type));
          portable_->scale(expected.data(), count, type, factor);
          level_->scale(actual.data(), count, type, factor);
          // A NaN times a NaN factor: either NaN (see first_difference).
          auto both_nan = [&](size_t i) {
            return std::isnan(factor) && is_nan(type, &input[i * dtype_size(type)]);
          };
          ASSERT_EQ(first_difference(type, expected.bytes(), actual.bytes(), both_nan), "");
        }
      }
    }
  }
}

// Every 16-bit pattern through the level's widening and narrowing: scaled
// (scale does the work even for factor 1), and x + y, x * y, min, max with
// random partners, so results round, overflow and underflow.
TEST_P(ReduceSimd, EverySixteenBitPatternMatchesPortable) {
  Bytes all(65536 * 2);
  for (uint32_t bits = 0; bits < 65536; ++bits) std::memcpy(&all[bits * 2], &bits, 2);
  for (DataType type : {DataType::kFloat16, DataType::kBFloat16}) {
    SCOPED_TRACE(dtype_name(type));
    // 1 + 2^-11 (float16) and 1 + 2^-8 (bfloat16) put every product
    // exactly halfway between two neighbours: ties to even everywhere, and
    // the largest finite values tie with infinity.
    for (double factor : {1.0, 1.0 + 1.0 / 2048, 1.0 + 1.0 / 256, 0.5, 3.0, 1.0 / 3}) {
      Buffer expected(all, 0), actual(all, 2);
      portable_->scale(expected.data(), 65536, type, factor);
      level_->scale(actual.data(), 65536, type, factor);
      ASSERT_EQ(first_difference(type, expected.bytes(), actual.bytes()), "") << "x" << factor;
    }
    for (uint64_t salt = 0; salt < 8; ++salt) {
      const Bytes partners = mixed_values(type, 65536, 100 + salt);
      for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProduct, ReduceOp::kMin, ReduceOp::kMax})
        check_op(type, op, all, partners, {salt % 2, 0, salt / 2 % 2});
      ASSERT_FALSE(HasFailure()) << "salt " << salt;
    }
  }
}

// Every pair of special values, both ways round. Spelled out for min/max
// below; here only "the same as portable".
TEST_P(ReduceSimd, SpecialFloat16PairsMatchPortable) {
  constexpr size_t n = std::size(kHalfSpecials);
  Bytes a(n * n * 2), b(n * n * 2);
  for (size_t i = 0; i < n; ++i) {
    for (size_t j = 0; j < n; ++j) {
      std::memcpy(&a[(i * n + j) * 2], &kHalfSpecials[i], 2);
      std::memcpy(&b[(i * n + j) * 2], &kHalfSpecials[j], 2);
    }
  }
  for (ReduceOp op : {ReduceOp::kSum, ReduceOp::kProduct, ReduceOp::kMin, ReduceOp::kMax}) {
    SCOPED_TRACE(reduce_op_name(op));
    check_op(DataType::kFloat16, op, a, b, {0, 0, 0});
    check_op(DataType::kFloat16, op, a, b, {1, 0, 1});
  }
}

// The semantics every level shares, pinned down: min/max keep a NaN already
// in the accumulator and ignore one arriving in `in` (`b < a ? b : a`, any
// comparison with NaN being false); every float16 NaN result is stored as
// 0x7e00 with the NaN's sign (payload dropped, as float16::from_float does).
TEST_P(ReduceSimd, Float16MinMaxWithNaNAndInfinity) {
  struct Case {
    uint16_t a, b, min, max;
  };
  const Case cases[] = {
      {0x7e00, 0x3c00, 0x7e00, 0x7e00},  // NaN, 1 -> NaN
      {0x3c00, 0x7e00, 0x3c00, 0x3c00},  // 1, NaN -> 1
      {0xfd55, 0x3c00, 0xfe00, 0xfe00},  // -NaN with a payload: canonical, sign kept
      {0x7c01, 0xfc00, 0x7e00, 0x7e00},  // signalling NaN: quiet, canonical
      {0xfc00, 0x7e00, 0xfc00, 0xfc00},  // -inf, NaN -> -inf
      {0x7c00, 0xfc00, 0xfc00, 0x7c00},  // inf, -inf
      {0x8000, 0x0000, 0x8000, 0x8000},  // -0 vs +0 compare equal: the accumulator's
      {0x0001, 0x8001, 0x8001, 0x0001},  // subnormals
      {0x7bff, 0x7c00, 0x7bff, 0x7c00},  // max finite vs inf
  };
  // Full vectors of each case, so the level's block path runs (the scalar
  // tail is the portable code).
  constexpr size_t kCopies = 64;
  for (const Case& c : cases) {
    std::vector<uint16_t> a(kCopies, c.a), b(kCopies, c.b), lo(kCopies), hi(kCopies);
    level_->combine(lo.data(), a.data(), b.data(), kCopies, DataType::kFloat16, ReduceOp::kMin);
    level_->combine(hi.data(), a.data(), b.data(), kCopies, DataType::kFloat16, ReduceOp::kMax);
    for (size_t i = 0; i < kCopies; ++i) {
      ASSERT_EQ(lo[i], c.min) << std::hex << c.a << " min " << c.b << " at " << std::dec << i;
      ASSERT_EQ(hi[i], c.max) << std::hex << c.a << " max " << c.b << " at " << std::dec << i;
    }
  }
}

TEST_P(ReduceSimd, UndefinedOpsThrowInvalidArgument) {
  float f[2] = {1, 2};
  EXPECT_THROW(level_->reduce_into(f, f + 1, 1, DataType::kFloat32, ReduceOp::kBitAnd),
               InvalidArgument);
  EXPECT_THROW(level_->scale(f, 1, static_cast<DataType>(42), 2.0), InvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(Levels, ReduceSimd, ::testing::Values(Level::kAvx2, Level::kAvx512),
                         [](const ::testing::TestParamInfo<Level>& param) {
                           return std::string(reduce::simd::level_name(param.param));
                         });

TEST(ReduceSimdDispatch, KoloSimdCapsTheLevel) {
  using reduce::simd::resolve_level;
  std::string note;
  EXPECT_EQ(resolve_level(std::nullopt, Level::kAvx512, &note), Level::kAvx512);
  EXPECT_EQ(resolve_level("auto", Level::kAvx2, &note), Level::kAvx2);
  EXPECT_EQ(resolve_level("", Level::kAvx2, &note), Level::kAvx2);
  EXPECT_EQ(note, "");
  EXPECT_EQ(resolve_level("portable", Level::kAvx512, &note), Level::kPortable);
  EXPECT_EQ(resolve_level("avx2", Level::kAvx512, &note), Level::kAvx2);
  EXPECT_EQ(note, "");
  EXPECT_EQ(resolve_level("avx512", Level::kAvx2, &note), Level::kAvx2);  // CPU lacks it
  EXPECT_NE(note.find("using avx2"), std::string::npos) << note;
  EXPECT_EQ(resolve_level("avx512", Level::kPortable, &note), Level::kPortable);
  EXPECT_EQ(resolve_level("sse9", Level::kAvx2, &note), Level::kAvx2);  // unknown: auto
  EXPECT_NE(note.find("KOLO_SIMD=sse9"), std::string::npos) << note;
}

TEST(ReduceSimdDispatch, ActiveLevelIsOneTheCpuRuns) {
  const Level active = reduce::simd::active_level();
  EXPECT_TRUE(reduce::simd::cpu_supports(active));
  EXPECT_EQ(reduce::simd_level_name(), reduce::simd::level_name(active));
  EXPECT_EQ(&reduce::simd::active_kernels(), reduce::simd::kernels_for(active));
  EXPECT_TRUE(reduce::simd::cpu_supports(Level::kPortable));
  // Without KOLO_SIMD the best level is used.
  if (std::getenv("KOLO_SIMD") == nullptr) {
    for (Level level : reduce::simd::kAllLevels)
      if (reduce::simd::cpu_supports(level)) {
        EXPECT_GE(active, level);
      }
  }
}

}  // namespace
}  // namespace kolo::testing
