// Element-wise reduction and scaling kernels, dispatched on dtype in one
// place. Loops are written over plain arrays with restrict-qualified
// pointers so the compiler vectorizes them; float16/bfloat16 are widened to
// float32, combined, and rounded once. The loops are built for several
// instruction-set levels and the best one the CPU runs is used (simd.h);
// every level gives the same bits.
#pragma once

#include <cstddef>
#include <string_view>

#include "kolo/types.h"

namespace kolo::reduce {

// inout[i] = inout[i] (op) in[i] for i in [0, count). kAverage reduces as
// kSum (the division is a postscale). Throws InvalidArgument when `op` is
// not defined for `dtype` (see reduce_op_supported).
void reduce_into(void* inout, const void* in, size_t count, DataType dtype, ReduceOp op);

// out[i] = a[i] (op) b[i]; out may be equal to a or b (never partially
// overlap them).
void reduce(void* out, const void* a, const void* b, size_t count, DataType dtype, ReduceOp op);

// data[i] *= factor, computed as Horovod's ScaleBuffer does: in float for
// float16/bfloat16/float32 (the factor rounded to float, the product rounded
// once to the type) and in double for float64 and the integer types (exact
// for all but int64 beyond 2^53); integer results are truncated toward zero
// and saturate at the type's range. bool stays 0/1 (false only for a zero
// factor). No-op when factor == 1.
void scale(void* data, size_t count, DataType dtype, double factor);

// The instruction-set level of the kernels in use: "avx512", "avx2" or
// "portable" (chosen once from the CPU, capped by KOLO_SIMD; see simd.h).
std::string_view simd_level_name();

}  // namespace kolo::reduce
