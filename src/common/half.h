// IEEE binary16 (float16) and bfloat16 storage types with conversions to and
// from float. Arithmetic always goes through float: Kolo accumulates 16-bit
// types in float32 and rounds once per reduction step (round to nearest even).
#pragma once

#include <cstdint>
#include <cstring>

namespace kolo {

inline uint32_t float_bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}
inline float bits_float(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

struct bfloat16 {
  uint16_t bits = 0;

  static bfloat16 from_bits(uint16_t b) { return bfloat16{b}; }
  static bfloat16 from_float(float f) {
    uint32_t u = float_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u)
      return from_bits(static_cast<uint16_t>((u >> 16) | 0x40));  // quiet NaN
    uint32_t rounding = 0x7fffu + ((u >> 16) & 1u);
    return from_bits(static_cast<uint16_t>((u + rounding) >> 16));
  }
  float to_float() const { return bits_float(static_cast<uint32_t>(bits) << 16); }
};

struct float16 {
  uint16_t bits = 0;

  static float16 from_bits(uint16_t b) { return float16{b}; }

  static float16 from_float(float f) {
    uint32_t u = float_bits(f);
    uint32_t sign = (u >> 16) & 0x8000u;
    uint32_t abs = u & 0x7fffffffu;
    if (abs > 0x7f800000u) return from_bits(static_cast<uint16_t>(sign | 0x7e00u));  // NaN
    if (abs >= 0x477ff000u)
      return from_bits(static_cast<uint16_t>(sign | 0x7c00u));  // overflow -> inf
    if (abs < 0x38800000u) {
      // Result is subnormal or zero: shift the implicit-one mantissa into place
      // and round to nearest even.
      if (abs < 0x33000000u) return from_bits(static_cast<uint16_t>(sign));
      uint32_t exponent = abs >> 23;
      uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
      uint32_t shift = 126 - exponent;  // 14..24
      uint32_t half_mantissa = mantissa >> shift;
      uint32_t remainder = mantissa & ((1u << shift) - 1);
      uint32_t halfway = 1u << (shift - 1);
      if (remainder > halfway || (remainder == halfway && (half_mantissa & 1u))) ++half_mantissa;
      return from_bits(static_cast<uint16_t>(sign | half_mantissa));
    }
    // Normal: rebias the exponent (127 -> 15) and round the mantissa.
    uint32_t rebased = abs - (112u << 23);
    uint32_t rounding = 0xfffu + ((rebased >> 13) & 1u);
    return from_bits(static_cast<uint16_t>(sign | ((rebased + rounding) >> 13)));
  }

  float to_float() const {
    uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
    uint32_t exponent = (bits >> 10) & 0x1fu;
    uint32_t mantissa = bits & 0x3ffu;
    if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));  // inf/NaN
    if (exponent == 0) {
      if (mantissa == 0) return bits_float(sign);
      // Subnormal: value = mantissa * 2^-24.
      float magnitude = static_cast<float>(mantissa) * 5.9604644775390625e-8f;
      return sign ? -magnitude : magnitude;
    }
    return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  }
};

static_assert(sizeof(float16) == 2 && sizeof(bfloat16) == 2);

}  // namespace kolo
