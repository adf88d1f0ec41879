// Run-time choice among the builds of the reduction kernels (loops.h): one
// per instruction-set level, each in its own translation unit compiled with
// that level's flags, so the rest of the library stays portable. Internal to
// the reduce kernels, their tests and bench/reduce_bench: callers use
// reduce.h, which runs the level chosen here.
//
// Every level computes the same bits: the kernels are element-wise (no
// reassociation), the level files are built with -ffp-contract=off and
// without FMA, and float16/bfloat16 conversions round to nearest even
// exactly as the portable ones do (reduce_simd_test compares them). One
// thing is left open, at every level: when both operands of a sum or a
// product are NaN (or a NaN is scaled by a NaN), which NaN comes through.
// x86 returns the first operand and the compiler may swap the operands of
// these commutative operations; it does, differently in a vectorized loop
// and its scalar tail, so even the portable level is not consistent there.
// The result is a NaN either way, and float16 keeps only its sign.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "kolo/types.h"

namespace kolo::reduce::simd {

// In increasing order of preference.
enum class Level : uint8_t {
  kPortable = 0,  // the compiler's baseline (SSE2 on x86-64)
  kAvx2 = 1,      // AVX2 + F16C
  kAvx512 = 2,    // AVX-512 F/BW/VL/DQ (F16C conversions on 512-bit vectors)
};
inline constexpr Level kAllLevels[] = {Level::kPortable, Level::kAvx2, Level::kAvx512};

// One level's kernels, with reduce.h's meaning, minus its checks: combine's
// output must not overlap its inputs at all, and scale does the work even
// for factor 1. Unsupported (dtype, op) pairs throw InvalidArgument.
struct Kernels {
  void (*reduce_into)(void* inout, const void* in, size_t count, DataType dtype, ReduceOp op);
  void (*combine)(void* out, const void* a, const void* b, size_t count, DataType dtype,
                  ReduceOp op);
  void (*scale)(void* data, size_t count, DataType dtype, double factor);
};

std::string_view level_name(Level level);  // "portable", "avx2", "avx512"

// Whether this build has the level's kernels and this CPU (and OS) can run
// them.
bool cpu_supports(Level level);

// The level's kernels, or nullptr where cpu_supports(level) is false. Tests
// and the benchmark call levels directly through this.
const Kernels* kernels_for(Level level);

// The level for a KOLO_SIMD value (nullopt: unset): "auto" or "" is `best`,
// "portable"/"avx2"/"avx512" that level capped at `best`. *note explains a
// request that could not be met as asked (capped, or an unknown value, which
// means auto); it is left empty otherwise.
Level resolve_level(std::optional<std::string_view> request, Level best, std::string* note);

// The level in use: chosen once, on first use, from KOLO_SIMD and the CPU.
Level active_level();
const Kernels& active_kernels();

// Each level's kernels, defined in level_<name>.cc; the x86 ones exist only
// where CMake compiled those files (KOLO_REDUCE_X86).
const Kernels& portable_kernels();
const Kernels& avx2_kernels();
const Kernels& avx512_kernels();

}  // namespace kolo::reduce::simd
