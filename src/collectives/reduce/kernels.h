// The element types and operators behind reduce.h, and the one place that
// maps a runtime (DataType, ReduceOp) to them. Internal to reduce.cc (and
// its tests): callers use reduce.h.
//
// An element type says how an element is stored and how it is combined:
// native arithmetic types combine as themselves; float16/bfloat16 widen to
// float, combine, and round once on the store (float16 through branch-free
// conversions, see Float16Type); bool is a byte where nonzero
// means true and results are 0/1.
#pragma once

#include <cstddef>
#include <cstdint>
#include <fmt/format.h>
#include <type_traits>

#include "common/error.h"
#include "common/half.h"
#include "kolo/types.h"

namespace kolo::reduce::kernels {

template <typename T>
struct NativeType {
  using Storage = T;
  using Compute = T;
  static Compute load(Storage v) { return v; }
  static Storage store(Compute v) { return v; }
};

// 16-bit floats are stored as their raw bits: loops over uint16_t vectorize,
// while loads of the one-member float16/bfloat16 structs may not.
struct BFloat16Type {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage v) { return bfloat16::from_bits(v).to_float(); }
  static Storage store(Compute v) { return bfloat16::from_float(v).bits; }
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
    const uint32_t subnormal =
        float_bits(bits_float(magnitude + (113u << 23)) - bits_float(113u << 23));
    const uint32_t result = exponent == 0x7c00u ? inf_nan : exponent == 0 ? subnormal : normal;
    return bits_float(sign | result);
  }

  static Storage store(Compute f) {
    const uint32_t u = float_bits(f);
    const uint32_t sign = (u >> 16) & 0x8000u;
    const uint32_t abs = u & 0x7fffffffu;
    // Normal: rebias 127 -> 15 and round the 13 dropped bits to nearest even.
    const uint32_t normal = (abs - (112u << 23) + 0xfffu + ((abs >> 13) & 1u)) >> 13;
    // Below 2^-14 the result is subnormal: adding 0.5f lines the half's
    // mantissa up with the float's low bits, and the FPU rounds to nearest
    // even for us.
    const uint32_t subnormal = float_bits(bits_float(abs) + 0.5f) - 0x3f000000u;
    const uint32_t result = abs > 0x7f800000u    ? 0x7e00u  // NaN
                            : abs >= 0x477ff000u ? 0x7c00u  // overflow -> inf
                            : abs < 0x38800000u  ? subnormal
                                                 : normal;
    return static_cast<uint16_t>(sign | result);
  }
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
  static C apply(C a, C b) { return wrapping_add(a, b); }
};
struct ProductOp {
  template <typename C>
  static C apply(C a, C b) { return wrapping_mul(a, b); }
};
// Written as selects rather than std::min/max so floats if-convert to
// compare+blend and vectorize.
struct MinOp {
  template <typename C>
  static C apply(C a, C b) { return b < a ? b : a; }
};
struct MaxOp {
  template <typename C>
  static C apply(C a, C b) { return a < b ? b : a; }
};
struct BitAndOp {
  template <typename C>
  static C apply(C a, C b) { return static_cast<C>(a & b); }
};
struct BitOrOp {
  template <typename C>
  static C apply(C a, C b) { return static_cast<C>(a | b); }
};
struct LogicalAndOp {
  static uint8_t apply(uint8_t a, uint8_t b) { return static_cast<uint8_t>((a != 0) & (b != 0)); }
};
struct LogicalOrOp {
  static uint8_t apply(uint8_t a, uint8_t b) { return static_cast<uint8_t>((a | b) != 0); }
};

[[noreturn]] inline void unsupported(DataType type, ReduceOp op) {
  throw InvalidArgument(fmt::format("reduce op {} is not defined for {}", reduce_op_name(op),
                                    dtype_name(type)));
}

// Calls f(ElementType{}) for `type`.
template <typename F>
decltype(auto) dispatch_type(DataType type, F&& f) {
  switch (type) {
    case DataType::kUInt8: return f(NativeType<uint8_t>{});
    case DataType::kInt8: return f(NativeType<int8_t>{});
    case DataType::kInt32: return f(NativeType<int32_t>{});
    case DataType::kInt64: return f(NativeType<int64_t>{});
    case DataType::kFloat16: return f(Float16Type{});
    case DataType::kBFloat16: return f(BFloat16Type{});
    case DataType::kFloat32: return f(NativeType<float>{});
    case DataType::kFloat64: return f(NativeType<double>{});
    case DataType::kBool: return f(BoolType{});
  }
  throw InvalidArgument(fmt::format("unknown data type {}", static_cast<int>(type)));
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
        case ReduceOp::kBitOr: return f(element, LogicalOrOp{});
        case ReduceOp::kProduct:
        case ReduceOp::kMin:
        case ReduceOp::kBitAnd: return f(element, LogicalAndOp{});
        case ReduceOp::kAverage: break;
      }
    } else {
      switch (op) {
        case ReduceOp::kSum:
        case ReduceOp::kAverage: return f(element, SumOp{});
        case ReduceOp::kProduct: return f(element, ProductOp{});
        case ReduceOp::kMin: return f(element, MinOp{});
        case ReduceOp::kMax: return f(element, MaxOp{});
        case ReduceOp::kBitAnd:
        case ReduceOp::kBitOr:
          if constexpr (std::is_integral_v<typename Element::Compute>) {
            if (op == ReduceOp::kBitAnd) return f(element, BitAndOp{});
            return f(element, BitOrOp{});
          }
          break;
      }
    }
    unsupported(type, op);
  });
}

}  // namespace kolo::reduce::kernels
