// Compiled with -O3 (see CMakeLists.txt) so the loops below vectorize: each
// is a plain indexed loop over restrict-qualified arrays whose body is a
// branch-free function of element i.
#include "collectives/reduce/reduce.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>

#include "collectives/reduce/kernels.h"
#include "common/check.h"

namespace kolo::reduce {
namespace {

using kernels::BoolType;

template <typename Element, typename Op>
void combine_into(typename Element::Storage* __restrict inout,
                  const typename Element::Storage* __restrict in, size_t count) {
  for (size_t i = 0; i < count; ++i)
    inout[i] = Element::store(Op::apply(Element::load(inout[i]), Element::load(in[i])));
}

template <typename Element, typename Op>
void combine(typename Element::Storage* __restrict out,
             const typename Element::Storage* __restrict a,
             const typename Element::Storage* __restrict b, size_t count) {
  for (size_t i = 0; i < count; ++i)
    out[i] = Element::store(Op::apply(Element::load(a[i]), Element::load(b[i])));
}

// Rounds to nearest (ties to even, the default rounding mode) and saturates
// at the type's range; NaN becomes 0. Converting an out-of-range double to an
// integer would be undefined behaviour.
template <typename T>
T round_saturate(double v) {
  if (std::isnan(v)) return 0;
  double r = std::nearbyint(v);
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
    // Every int8/uint8/int32 is exact in double, so only int64 beyond 2^53
    // loses precision.
    for (size_t i = 0; i < count; ++i)
      data[i] = round_saturate<Compute>(static_cast<double>(data[i]) * factor);
  } else {
    // float16/bfloat16/float32 in float, float64 in double.
    const Compute f = static_cast<Compute>(factor);
    for (size_t i = 0; i < count; ++i) data[i] = Element::store(Element::load(data[i]) * f);
  }
}

bool overlaps(const void* a, const void* b, size_t bytes) {
  auto pa = reinterpret_cast<uintptr_t>(a);
  auto pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + bytes && pb < pa + bytes;
}

}  // namespace

void reduce_into(void* inout, const void* in, size_t count, DataType dtype, ReduceOp op) {
  kernels::dispatch(dtype, op, [&](auto element, auto op_tag) {
    using Element = decltype(element);
    using Storage = typename Element::Storage;
    combine_into<Element, decltype(op_tag)>(static_cast<Storage*>(inout),
                                            static_cast<const Storage*>(in), count);
  });
}

void reduce(void* out, const void* a, const void* b, size_t count, DataType dtype, ReduceOp op) {
  // Every operator is commutative, so an aliased output is an in-place
  // reduction of the other operand; restrict then stays truthful.
  if (out == a) return reduce_into(out, b, count, dtype, op);
  if (out == b) return reduce_into(out, a, count, dtype, op);
  const size_t bytes = count * dtype_size(dtype);
  KOLO_CHECK_MSG(!overlaps(out, a, bytes) && !overlaps(out, b, bytes),
                 "reduce output partially overlaps an input ({} bytes)", bytes);
  kernels::dispatch(dtype, op, [&](auto element, auto op_tag) {
    using Element = decltype(element);
    using Storage = typename Element::Storage;
    combine<Element, decltype(op_tag)>(static_cast<Storage*>(out), static_cast<const Storage*>(a),
                                       static_cast<const Storage*>(b), count);
  });
}

void scale(void* data, size_t count, DataType dtype, double factor) {
  if (factor == 1.0 || count == 0) return;
  kernels::dispatch_type(dtype, [&](auto element) {
    using Element = decltype(element);
    scale_elements<Element>(static_cast<typename Element::Storage*>(data), count, factor);
  });
}

}  // namespace kolo::reduce
