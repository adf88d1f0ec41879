// The kernels for AVX-512 F/BW/VL/DQ (CMake compiles this file alone with
// those -m flags, -mf16c, -ffp-contract=off and 512-bit vectors preferred).
// The loops are loops.h's; float16 moves through the 512-bit F16C
// conversions and bfloat16 through shifts, sixteen elements at a time.
#define KOLO_REDUCE_LEVEL avx512
#include "collectives/reduce/kernels.h"

// GCC 12 warns about the _mm512_undefined_*() inside its own AVX-512
// intrinsics once they are inlined (bug 105593, fixed in GCC 13).
#if defined(__GNUC__) && !defined(__clang__) && __GNUC__ < 13
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

#include <immintrin.h>

namespace kolo::reduce::kernels {
inline namespace avx512 {

template <>
struct Blocks<Float16Type> {
  static constexpr bool kEnabled = true;
  static constexpr size_t kWidth = 16;
  using Vector = __m512;

  static Vector load(const uint16_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }

  // As in level_avx2.cc: NaN lanes become the float NaN that converts to
  // Float16Type::store's 0x7e00 (with the sign), then round to nearest even.
  static void store(uint16_t* p, Vector v) {
    const __mmask16 is_nan = _mm512_cmp_ps_mask(v, v, _CMP_UNORD_Q);
    const __m512i sign = _mm512_and_si512(_mm512_castps_si512(v), _mm512_set1_epi32(INT32_MIN));
    const __m512i quiet_nan = _mm512_or_si512(sign, _mm512_set1_epi32(0x7fc00000));
    v = _mm512_mask_mov_ps(v, is_nan, _mm512_castsi512_ps(quiet_nan));
    const __m256i h = _mm512_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), h);
  }

  static Vector splat(float f) { return _mm512_set1_ps(f); }
};

// BFloat16Type's load and store, sixteen lanes at a time (see
// level_avx2.cc). Not vcvtneps2bf16 (AVX512_BF16): it flushes subnormals to
// zero, where BFloat16Type::store rounds them like any other value.
template <>
struct Blocks<BFloat16Type> {
  static constexpr bool kEnabled = true;
  static constexpr size_t kWidth = 16;
  using Vector = __m512;

  static Vector load(const uint16_t* p) {
    const __m512i wide =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }

  static void store(uint16_t* p, Vector v) {
    const __m512i u = _mm512_castps_si512(v);
    const __m512i high = _mm512_srli_epi32(u, 16);
    const __m512i odd = _mm512_and_si512(high, _mm512_set1_epi32(1));
    const __m512i rounded = _mm512_srli_epi32(
        _mm512_add_epi32(_mm512_add_epi32(u, _mm512_set1_epi32(0x7fff)), odd), 16);
    const __m512i quiet_nan = _mm512_or_si512(high, _mm512_set1_epi32(0x40));
    const __mmask16 is_nan = _mm512_cmpgt_epu32_mask(
        _mm512_and_si512(u, _mm512_set1_epi32(0x7fffffff)), _mm512_set1_epi32(0x7f800000));
    const __m512i result = _mm512_mask_mov_epi32(rounded, is_nan, quiet_nan);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi32_epi16(result));  // truncates
  }

  static Vector splat(float f) { return _mm512_set1_ps(f); }
};

}  // namespace avx512
}  // namespace kolo::reduce::kernels

#include "collectives/reduce/loops.h"

namespace kolo::reduce::simd {

const Kernels& avx512_kernels() {
  return kernels::avx512::kLevelKernels;
}

}  // namespace kolo::reduce::simd
