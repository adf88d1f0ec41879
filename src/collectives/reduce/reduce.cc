// The public entry points: argument checks here, the loops in the level
// chosen by simd.cc (see loops.h and level_*.cc).
#include "collectives/reduce/reduce.h"

#include <fmt/format.h>

#include <cstdint>

#include "collectives/reduce/simd.h"
#include "common/check.h"
#include "common/error.h"

namespace kolo::reduce {
namespace kernels {

void unsupported(DataType type, ReduceOp op) {
  throw InvalidArgument(
      fmt::format("reduce op {} is not defined for {}", reduce_op_name(op), dtype_name(type)));
}

void unknown_type(DataType type) {
  throw InvalidArgument(fmt::format("unknown data type {}", static_cast<int>(type)));
}

}  // namespace kernels

namespace {

bool overlaps(const void* a, const void* b, size_t bytes) {
  auto pa = reinterpret_cast<uintptr_t>(a);
  auto pb = reinterpret_cast<uintptr_t>(b);
  return pa < pb + bytes && pb < pa + bytes;
}

}  // namespace

void reduce_into(void* inout, const void* in, size_t count, DataType dtype, ReduceOp op) {
  simd::active_kernels().reduce_into(inout, in, count, dtype, op);
}

void reduce(void* out, const void* a, const void* b, size_t count, DataType dtype, ReduceOp op) {
  // Every operator is commutative, so an aliased output is an in-place
  // reduction of the other operand; restrict then stays truthful.
  if (out == a) return reduce_into(out, b, count, dtype, op);
  if (out == b) return reduce_into(out, a, count, dtype, op);
  const size_t bytes = count * dtype_size(dtype);
  KOLO_CHECK_MSG(!overlaps(out, a, bytes) && !overlaps(out, b, bytes),
                 "reduce output partially overlaps an input ({} bytes)", bytes);
  simd::active_kernels().combine(out, a, b, count, dtype, op);
}

void scale(void* data, size_t count, DataType dtype, double factor) {
  if (factor == 1.0 || count == 0) return;
  simd::active_kernels().scale(data, count, dtype, factor);
}

std::string_view simd_level_name() {
  return simd::level_name(simd::active_level());
}

}  // namespace kolo::reduce
