#include "collectives/adasum/adasum_kernels.h"

#include <fmt/format.h>

#include <array>

#include "common/error.h"
#include "common/half.h"

namespace kolo::collectives::adasum {
namespace {

// How each stored type widens to double; 16-bit floats go through float.
template <typename T>
struct Storage {
  static double widen(T v) { return static_cast<double>(v); }
};
template <>
struct Storage<float16> {
  static double widen(float16 v) { return v.to_float(); }
};
template <>
struct Storage<bfloat16> {
  static double widen(bfloat16 v) { return v.to_float(); }
};

// Four independent partial sums per quantity, so the loop is not one chain
// of dependent double additions (a quarter of the latency per element) and
// the compiler may keep the lanes in vector registers; the result is a
// deterministic function of the input, which is all Adasum needs (each
// slice is summed by exactly one rank).
template <typename T>
DotAndNorms dot_and_norms_of(const T* __restrict a, const T* __restrict b, size_t count) {
  constexpr size_t kLanes = 4;
  std::array<double, kLanes> dot{}, aa{}, bb{};
  size_t i = 0;
  for (; i + kLanes <= count; i += kLanes) {
    for (size_t l = 0; l < kLanes; ++l) {
      const double x = Storage<T>::widen(a[i + l]);
      const double y = Storage<T>::widen(b[i + l]);
      dot[l] += x * y;
      aa[l] += x * x;
      bb[l] += y * y;
    }
  }
  for (size_t l = 0; i < count; ++i, ++l) {
    const double x = Storage<T>::widen(a[i]);
    const double y = Storage<T>::widen(b[i]);
    dot[l] += x * y;
    aa[l] += x * x;
    bb[l] += y * y;
  }
  DotAndNorms out;
  for (size_t l = 0; l < kLanes; ++l) {
    out.dot += dot[l];
    out.a_norm_sq += aa[l];
    out.b_norm_sq += bb[l];
  }
  return out;
}

template <typename T>
void scaled_add_wide(T* __restrict a, double ca, const T* __restrict b, double cb, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    a[i] = static_cast<T>(ca * static_cast<double>(a[i]) + cb * static_cast<double>(b[i]));
  }
}

template <typename Half>
void scaled_add_half(Half* __restrict a, double ca, const Half* __restrict b, double cb,
                     size_t count) {
  const float fa = static_cast<float>(ca);
  const float fb = static_cast<float>(cb);
  for (size_t i = 0; i < count; ++i) {
    a[i] = Half::from_float(fa * a[i].to_float() + fb * b[i].to_float());
  }
}

[[noreturn]] void not_floating(DataType dtype) {
  throw InternalError(fmt::format("Adasum kernels called for {}", dtype_name(dtype)));
}

}  // namespace

DotAndNorms dot_and_norms(const void* a, const void* b, size_t count, DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return dot_and_norms_of(static_cast<const float*>(a), static_cast<const float*>(b), count);
    case DataType::kFloat64:
      return dot_and_norms_of(static_cast<const double*>(a), static_cast<const double*>(b), count);
    case DataType::kFloat16:
      return dot_and_norms_of(static_cast<const float16*>(a), static_cast<const float16*>(b),
                              count);
    case DataType::kBFloat16:
      return dot_and_norms_of(static_cast<const bfloat16*>(a), static_cast<const bfloat16*>(b),
                              count);
    default:
      not_floating(dtype);
  }
}

void scaled_add(void* a, double a_coeff, const void* b, double b_coeff, size_t count,
                DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return scaled_add_wide(static_cast<float*>(a), a_coeff, static_cast<const float*>(b), b_coeff,
                             count);
    case DataType::kFloat64:
      return scaled_add_wide(static_cast<double*>(a), a_coeff, static_cast<const double*>(b),
                             b_coeff, count);
    case DataType::kFloat16:
      return scaled_add_half(static_cast<float16*>(a), a_coeff, static_cast<const float16*>(b),
                             b_coeff, count);
    case DataType::kBFloat16:
      return scaled_add_half(static_cast<bfloat16*>(a), a_coeff, static_cast<const bfloat16*>(b),
                             b_coeff, count);
    default:
      not_floating(dtype);
  }
}

}  // namespace kolo::collectives::adasum
