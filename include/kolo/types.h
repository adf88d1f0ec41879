// Element types and reduction operations shared by every layer of Kolo.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace kolo {

// The numeric values are part of the wire format (negotiation messages, store
// records); append new types at the end only.
enum class DataType : uint8_t {
  kUInt8 = 0,
  kInt8 = 1,
  kInt32 = 2,
  kInt64 = 3,
  kFloat16 = 4,
  kBFloat16 = 5,
  kFloat32 = 6,
  kFloat64 = 7,
  kBool = 8,
  kInt16 = 9,
};
inline constexpr int kNumDataTypes = 10;

// A tensor's device: kCpuDevice, or a CUDA ordinal (>= 0) once GPU support
// lands. The C API spells it KOLO_CPU_DEVICE.
inline constexpr int32_t kCpuDevice = -1;

// kAverage is executed as kSum followed by a postscale of 1/n. For bool,
// kSum/kMax/kBitOr mean logical or and kProduct/kMin/kBitAnd mean logical and.
// kAdasum is not elementwise: it combines whole tensors pairwise with
// coefficients from their dot product and norms (collectives/adasum.h), for
// floating types on a power-of-two number of ranks.
enum class ReduceOp : uint8_t {
  kSum = 0,
  kAverage = 1,
  kMin = 2,
  kMax = 3,
  kProduct = 4,
  kBitAnd = 5,
  kBitOr = 6,
  kAdasum = 7,
};
inline constexpr int kNumReduceOps = 8;

size_t dtype_size(DataType type);
std::string_view dtype_name(DataType type);  // "float32", "bfloat16", ...
std::optional<DataType> parse_dtype(std::string_view name);
bool is_floating(DataType type);

std::string_view reduce_op_name(ReduceOp op);  // "sum", "average", ...
std::optional<ReduceOp> parse_reduce_op(std::string_view name);
// Bitwise ops are defined for integer and bool types only; average for
// everything but bool; adasum for the floating types only.
bool reduce_op_supported(ReduceOp op, DataType type);

// How allreduce and reducescatter combine the ranks' inputs: each input
// times `prescale`, then `op`, then the result times `postscale` (kAverage
// also divides by the number of ranks). The one description of a reduction
// from the public API down to the kernels: checked once, where a caller
// hands it to the engine (reduction_problem), and assumed valid below.
struct Reduction {
  ReduceOp op = ReduceOp::kSum;
  double prescale = 1.0;
  double postscale = 1.0;

  bool operator==(const Reduction&) const = default;
};

// Why `reduction` cannot combine tensors of `type` (an op undefined for it,
// a scale that is not finite), or "" when it can.
std::string reduction_problem(const Reduction& reduction, DataType type);

}  // namespace kolo
