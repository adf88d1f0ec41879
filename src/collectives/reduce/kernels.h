// The element types and operators behind reduce.h, and the one place that
// maps a runtime (DataType, ReduceOp) to them. Internal to the reduce
// kernels (and their tests): callers use reduce.h.
//
// An element type says how an element is stored and how it is combined:
// native arithmetic types combine as themselves; float16/bfloat16 widen to
// float, combine, and round once on the store (through branch-free
// conversions bit-identical to common/half.h, see Float16Type); bool is a
// byte where nonzero means true and results are 0/1.
//
// This header is compiled once per SIMD level (level_*.cc, each with its own
// -m flags). Everything below lives in an inline namespace named after the
// level, so the copies the compiler emits out of line (all of them inline
// functions) get distinct symbols; with one shared name the linker would
// keep an arbitrary copy, perhaps an AVX-512 one, for every caller. For the
// same reason it includes no Kolo header with inline functions (half.h,
// fmt): those would be shared symbols compiled with the level's flags.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "kolo/types.h"

#ifndef KOLO_REDUCE_LEVEL
#define KOLO_REDUCE_LEVEL portable
#endif

namespace kolo::reduce::kernels {

// Out of line in reduce.cc (plain code): they format messages with fmt.
[[noreturn]] void unsupported(DataType type, ReduceOp op);
[[noreturn]] void unknown_type(DataType type);

inline namespace KOLO_REDUCE_LEVEL {

inline uint32_t to_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float from_bits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

template <typename T>
struct NativeType {
  using Storage = T;
  using Compute = T;
  static Compute load(Storage v) { return v; }
  static Storage store(Compute v) { return v; }
};

// 16-bit floats are stored as their raw bits: loops over uint16_t vectorize,
// while loads of the one-member float16/bfloat16 structs may not.
// bfloat16 is bfloat16::to_float/from_float of common/half.h written as
// selects: widen by a shift; round to nearest even, except that a NaN keeps
// its top bits and is made quiet.
struct BFloat16Type {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage v) { return from_bits(static_cast<uint32_t>(v) << 16); }
  static Storage store(Compute f) {
    const uint32_t u = to_bits(f);
    const uint32_t rounded = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    const uint32_t quiet_nan = (u >> 16) | 0x40u;
    return static_cast<uint16_t>((u & 0x7fffffffu) > 0x7f800000u ? quiet_nan : rounded);
  }
};

// float16 with the conversions of common/half.h rewritten without branches
// (every case computed, then selected), so loops over it vectorize; half.h's
// early returns keep the compiler from doing so, at about a tenth of the
// speed. Bit-identical to float16::to_float/from_float (reduce_test checks).
struct Float16Type {
  using Storage = uint16_t;
  using Compute = float;

  static Compute load(Storage h) {
    const uint32_t sign = (h & 0x8000u) << 16;
    const uint32_t magnitude = (h & 0x7fffu) << 13;  // exponent and mantissa in float position
    const uint32_t exponent = h & 0x7c00u;
    const uint32_t normal = magnitude + (112u << 23);  // rebias 15 -> 127
    const uint32_t inf_nan = magnitude | 0x7f800000u;
    // Subnormal: read the mantissa as the fraction of 2^-14 * 1.m, then
    // subtract the implicit 2^-14, which leaves m * 2^-24 exactly.
    const uint32_t subnormal = to_bits(from_bits(magnitude + (113u << 23)) - from_bits(113u << 23));
    const uint32_t result = exponent == 0x7c00u ? inf_nan : exponent == 0 ? subnormal : normal;
    return from_bits(sign | result);
  }

  static Storage store(Compute f) {
    const uint32_t u = to_bits(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t abs = u & 0x7fffffffu;
    // Normal: rebias 127 -> 15 and round the 13 dropped bits to nearest even.
    const uint32_t normal = (abs - (112u << 23) + 0xfffu + ((abs >> 13) & 1u)) >> 13;
    // Below 2^-14 the result is subnormal: adding 0.5f lines the half's
    // mantissa up with the float's low bits, and the FPU rounds to nearest
    // even for us.
    const uint32_t subnormal = to_bits(from_bits(abs) + 0.5f) - 0x3f000000u;
    const uint32_t result = abs > 0x7f800000u    ? 0x7e00u  // NaN
                            : abs >= 0x477ff000u ? 0x7c00u  // overflow -> inf
                            : abs < 0x38800000u  ? subnormal
                                                 : normal;
    return static_cast<uint16_t>(sign | result);
  }
};

// Specialized by a SIMD level (level_avx2.cc, level_avx512.cc) for an element
// type whose conversions it does a vector at a time, before it includes
// loops.h; the loops there then take kWidth elements per step through it:
//   static constexpr bool kEnabled = true; static constexpr size_t kWidth;
//   using Vector = <kWidth floats>; static Vector load(const Storage*);
//   static void store(Storage*, Vector); static Vector splat(float);
// Results must be bit-identical to the element type's load and store.
template <typename Element>
struct Blocks {
  static constexpr bool kEnabled = false;
};

struct BoolType {
  using Storage = uint8_t;
  using Compute = uint8_t;
  static Compute load(Storage v) { return v; }
  static Storage store(Compute v) { return v; }
};

// Signed overflow is undefined behaviour, so integer sums and products are
// computed in the unsigned type of the same width: the result wraps modulo
// 2^bits, as the frameworks' integer tensors do.
template <typename T>
T wrapping_add(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
  } else {
    return a + b;
  }
}

template <typename T>
T wrapping_mul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    // uint8 operands promote to int, whose product of two bytes cannot overflow.
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
  } else {
    return a * b;
  }
}

struct SumOp {
  template <typename C>
  static C apply(C a, C b) {
    return wrapping_add(a, b);
  }
};
struct ProductOp {
  template <typename C>
  static C apply(C a, C b) {
    return wrapping_mul(a, b);
  }
};
// Written as selects rather than std::min/max so floats if-convert to
// compare+blend and vectorize.
struct MinOp {
  template <typename C>
  static C apply(C a, C b) {
    return b < a ? b : a;
  }
};
struct MaxOp {
  template <typename C>
  static C apply(C a, C b) {
    return a < b ? b : a;
  }
};
struct BitAndOp {
  template <typename C>
  static C apply(C a, C b) {
    return static_cast<C>(a & b);
  }
};
struct BitOrOp {
  template <typename C>
  static C apply(C a, C b) {
    return static_cast<C>(a | b);
  }
};
struct LogicalAndOp {
  static uint8_t apply(uint8_t a, uint8_t b) { return static_cast<uint8_t>((a != 0) & (b != 0)); }
};
struct LogicalOrOp {
  static uint8_t apply(uint8_t a, uint8_t b) { return static_cast<uint8_t>((a | b) != 0); }
};

// Calls f(ElementType{}) for `type`.
template <typename F>
decltype(auto) dispatch_type(DataType type, F&& f) {
  switch (type) {
    case DataType::kUInt8:
      return f(NativeType<uint8_t>{});
    case DataType::kInt8:
      return f(NativeType<int8_t>{});
    case DataType::kInt16:
      return f(NativeType<int16_t>{});
    case DataType::kInt32:
      return f(NativeType<int32_t>{});
    case DataType::kInt64:
      return f(NativeType<int64_t>{});
    case DataType::kFloat16:
      return f(Float16Type{});
    case DataType::kBFloat16:
      return f(BFloat16Type{});
    case DataType::kFloat32:
      return f(NativeType<float>{});
    case DataType::kFloat64:
      return f(NativeType<double>{});
    case DataType::kBool:
      return f(BoolType{});
  }
  unknown_type(type);
}

// Calls f(ElementType{}, Operator{}) for (type, op); throws InvalidArgument
// where the pair is undefined. kAverage runs as kSum (its division is a
// postscale applied by the caller). This is the only (dtype, op) switch.
template <typename F>
void dispatch(DataType type, ReduceOp op, F&& f) {
  dispatch_type(type, [&](auto element) {
    using Element = decltype(element);
    if constexpr (std::is_same_v<Element, BoolType>) {
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kMax:
        case ReduceOp::kBitOr:
          return f(element, LogicalOrOp{});
        case ReduceOp::kProduct:
        case ReduceOp::kMin:
        case ReduceOp::kBitAnd:
          return f(element, LogicalAndOp{});
        case ReduceOp::kAverage:
        case ReduceOp::kAdasum:
          break;
      }
    } else {
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAverage:
          return f(element, SumOp{});
        case ReduceOp::kProduct:
          return f(element, ProductOp{});
        case ReduceOp::kMin:
          return f(element, MinOp{});
        case ReduceOp::kMax:
          return f(element, MaxOp{});
        case ReduceOp::kBitAnd:
        case ReduceOp::kBitOr:
          if constexpr (std::is_integral_v<typename Element::Compute>) {
            if (op == ReduceOp::kBitAnd) return f(element, BitAndOp{});
            return f(element, BitOrOp{});
          }
          break;
        case ReduceOp::kAdasum:
          break;  // not elementwise: collectives/adasum.h
      }
    }
    unsupported(type, op);
  });
}

}  // namespace KOLO_REDUCE_LEVEL
}  // namespace kolo::reduce::kernels
