// The kernel loops, compiled once per SIMD level: level_portable.cc,
// level_avx2.cc and level_avx512.cc each define KOLO_REDUCE_LEVEL, include
// this header, and differ only in their compiler flags and in the Blocks
// they specialize. Include nothing else here with inline functions that live
// outside the level's namespace (see kernels.h). A level specializes
// Blocks before including this header.
//
// Each loop is a plain indexed loop over restrict-qualified arrays whose body
// is a branch-free function of element i, so the compiler vectorizes it for
// the level's instruction set. Where it cannot do well on its own (float16:
// the compiler does not turn our conversions into F16C instructions;
// bfloat16: it narrows clumsily), a
// level specializes Blocks<Element>, and the loops take whole vectors of
// kWidth elements through it, leaving the rest to the scalar loop. The
// operators are the same templates either way: on GCC/Clang vector types,
// `a + b`, `a * b` and `b < a ? b : a` are element-wise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "collectives/reduce/kernels.h"
#include "collectives/reduce/simd.h"

namespace kolo::reduce::kernels {
inline namespace KOLO_REDUCE_LEVEL {

template <typename Element, typename Op>
void combine_into(typename Element::Storage* __restrict inout,
                  const typename Element::Storage* __restrict in, size_t count) {
  size_t i = 0;
  if constexpr (Blocks<Element>::kEnabled) {
    using B = Blocks<Element>;
    for (; i + B::kWidth <= count; i += B::kWidth)
      B::store(inout + i, Op::apply(B::load(inout + i), B::load(in + i)));
  }
  for (; i < count; ++i)
    inout[i] = Element::store(Op::apply(Element::load(inout[i]), Element::load(in[i])));
}

template <typename Element, typename Op>
void combine(typename Element::Storage* __restrict out,
             const typename Element::Storage* __restrict a,
             const typename Element::Storage* __restrict b, size_t count) {
  size_t i = 0;
  if constexpr (Blocks<Element>::kEnabled) {
    using B = Blocks<Element>;
    for (; i + B::kWidth <= count; i += B::kWidth)
      B::store(out + i, Op::apply(B::load(a + i), B::load(b + i)));
  }
  for (; i < count; ++i)
    out[i] = Element::store(Op::apply(Element::load(a[i]), Element::load(b[i])));
}

// Truncates toward zero, as a C++ conversion of the scaled double does and
// as Horovod's ScaleBuffer does (so an int32 Average of 75 over 2 ranks is
// 37, not 38), and saturates at the type's range; NaN becomes 0. Converting
// an out-of-range double to an integer would be undefined behaviour (Horovod
// leaves it so; Kolo saturates). Builtins rather than std::isnan and
// std::trunc: those are inline functions outside the level namespace.
template <typename T>
T truncate_saturate(double v) {
  if (__builtin_isnan(v)) return 0;
  double r = __builtin_trunc(v);
  // 2^63 and -2^63 are exact doubles; the max of int64 is not, so compare
  // against the power of two instead.
  constexpr double kUpper = static_cast<double>(std::numeric_limits<T>::max()) + 1.0;
  constexpr double kLower = static_cast<double>(std::numeric_limits<T>::min());
  if (r >= kUpper) return std::numeric_limits<T>::max();
  if (r < kLower) return std::numeric_limits<T>::min();
  return static_cast<T>(r);
}

template <typename Element>
void scale_elements(typename Element::Storage* __restrict data, size_t count, double factor) {
  using Compute = typename Element::Compute;
  if constexpr (std::is_same_v<Element, BoolType>) {
    // A scaled truth value stays true unless the factor is zero.
    const uint8_t keep = factor != 0.0 ? 1 : 0;
    for (size_t i = 0; i < count; ++i) data[i] = static_cast<uint8_t>((data[i] != 0) & keep);
  } else if constexpr (std::is_integral_v<Compute>) {
    // Every int8/uint8/int16/int32 is exact in double, so only int64 beyond
    // 2^53 loses precision.
    for (size_t i = 0; i < count; ++i)
      data[i] = truncate_saturate<Compute>(static_cast<double>(data[i]) * factor);
  } else {
    // float16/bfloat16/float32 in float, float64 in double.
    const Compute f = static_cast<Compute>(factor);
    size_t i = 0;
    if constexpr (Blocks<Element>::kEnabled) {
      using B = Blocks<Element>;
      const typename B::Vector fv = B::splat(f);
      for (; i + B::kWidth <= count; i += B::kWidth) B::store(data + i, B::load(data + i) * fv);
    }
    for (; i < count; ++i) data[i] = Element::store(Element::load(data[i]) * f);
  }
}

// The level's entry points: the (dtype, op) dispatch, then the loop. No
// checks beyond dispatch's: reduce.cc validates aliasing and overlap.
inline void reduce_into_any(void* inout, const void* in, size_t count, DataType dtype,
                            ReduceOp op) {
  dispatch(dtype, op, [&](auto element, auto op_tag) {
    using Element = decltype(element);
    using Storage = typename Element::Storage;
    combine_into<Element, decltype(op_tag)>(static_cast<Storage*>(inout),
                                            static_cast<const Storage*>(in), count);
  });
}

inline void combine_any(void* out, const void* a, const void* b, size_t count, DataType dtype,
                        ReduceOp op) {
  dispatch(dtype, op, [&](auto element, auto op_tag) {
    using Element = decltype(element);
    using Storage = typename Element::Storage;
    combine<Element, decltype(op_tag)>(static_cast<Storage*>(out), static_cast<const Storage*>(a),
                                       static_cast<const Storage*>(b), count);
  });
}

inline void scale_any(void* data, size_t count, DataType dtype, double factor) {
  dispatch_type(dtype, [&](auto element) {
    using Element = decltype(element);
    scale_elements<Element>(static_cast<typename Element::Storage*>(data), count, factor);
  });
}

inline constexpr simd::Kernels kLevelKernels{&reduce_into_any, &combine_any, &scale_any};

}  // namespace KOLO_REDUCE_LEVEL
}  // namespace kolo::reduce::kernels
