// The kernels for AVX2 + F16C (CMake compiles this file alone with -mavx2
// -mf16c -mno-fma -ffp-contract=off). The loops are loops.h's; float16 moves
// through F16C and bfloat16 through shifts, eight elements at a time.
#define KOLO_REDUCE_LEVEL avx2
#include <immintrin.h>

#include "collectives/reduce/kernels.h"

namespace kolo::reduce::kernels {
inline namespace avx2 {

template <>
struct Blocks<Float16Type> {
  static constexpr bool kEnabled = true;
  static constexpr size_t kWidth = 8;
  using Vector = __m256;

  static Vector load(const uint16_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }

  // vcvtps2ph rounds to nearest even like Float16Type::store, overflow and
  // subnormals included, but keeps a NaN's payload (quieted) where
  // Float16Type::store makes every NaN 0x7e00 with its sign; so NaN lanes
  // are first replaced by the float NaN that converts to exactly that.
  static void store(uint16_t* p, Vector v) {
    const __m256 is_nan = _mm256_cmp_ps(v, v, _CMP_UNORD_Q);
    const __m256 sign = _mm256_and_ps(v, _mm256_castsi256_ps(_mm256_set1_epi32(INT32_MIN)));
    const __m256 quiet_nan = _mm256_or_ps(sign, _mm256_castsi256_ps(_mm256_set1_epi32(0x7fc00000)));
    const __m128i h =
        _mm256_cvtps_ph(_mm256_blendv_ps(v, quiet_nan, is_nan), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
  }

  static Vector splat(float f) { return _mm256_set1_ps(f); }
};

// BFloat16Type's load and store, eight lanes at a time. The compiler
// vectorizes the scalar ones too, but a quarter slower: it narrows to 16
// bits before its NaN select and widens again.
template <>
struct Blocks<BFloat16Type> {
  static constexpr bool kEnabled = true;
  static constexpr size_t kWidth = 8;
  using Vector = __m256;

  static Vector load(const uint16_t* p) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }

  static void store(uint16_t* p, Vector v) {
    const __m256i u = _mm256_castps_si256(v);
    const __m256i high = _mm256_srli_epi32(u, 16);
    const __m256i odd = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i rounded = _mm256_srli_epi32(
        _mm256_add_epi32(_mm256_add_epi32(u, _mm256_set1_epi32(0x7fff)), odd), 16);
    const __m256i quiet_nan = _mm256_or_si256(high, _mm256_set1_epi32(0x40));
    // Signed compare: both sides are below 2^31 once the sign is masked off.
    const __m256i is_nan = _mm256_cmpgt_epi32(_mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff)),
                                              _mm256_set1_epi32(0x7f800000));
    const __m256i result = _mm256_blendv_epi8(rounded, quiet_nan, is_nan);
    // Every lane is below 2^16, so unsigned saturation packs it unchanged.
    const __m128i h =
        _mm_packus_epi32(_mm256_castsi256_si128(result), _mm256_extracti128_si256(result, 1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p), h);
  }

  static Vector splat(float f) { return _mm256_set1_ps(f); }
};

}  // namespace avx2
}  // namespace kolo::reduce::kernels

#include "collectives/reduce/loops.h"

namespace kolo::reduce::simd {

const Kernels& avx2_kernels() {
  return kernels::avx2::kLevelKernels;
}

}  // namespace kolo::reduce::simd
