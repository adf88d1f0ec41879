#include "kolo/types.h"

#include <fmt/format.h>

#include <array>
#include <cmath>

namespace kolo {
namespace {

struct TypeInfo {
  DataType type;
  std::string_view name;
  size_t size;
  bool floating;
};

constexpr std::array<TypeInfo, kNumDataTypes> kTypes = {{
    {DataType::kUInt8, "uint8", 1, false},
    {DataType::kInt8, "int8", 1, false},
    {DataType::kInt32, "int32", 4, false},
    {DataType::kInt64, "int64", 8, false},
    {DataType::kFloat16, "float16", 2, true},
    {DataType::kBFloat16, "bfloat16", 2, true},
    {DataType::kFloat32, "float32", 4, true},
    {DataType::kFloat64, "float64", 8, true},
    {DataType::kBool, "bool", 1, false},
    {DataType::kInt16, "int16", 2, false},
}};

constexpr std::array<std::string_view, kNumReduceOps> kOpNames = {
    "sum", "average", "min", "max", "product", "band", "bor", "adasum"};

const TypeInfo& info(DataType type) {
  return kTypes.at(static_cast<size_t>(type));
}

}  // namespace

size_t dtype_size(DataType type) {
  return info(type).size;
}
std::string_view dtype_name(DataType type) {
  return info(type).name;
}
bool is_floating(DataType type) {
  return info(type).floating;
}

std::optional<DataType> parse_dtype(std::string_view name) {
  for (const auto& t : kTypes)
    if (t.name == name) return t.type;
  // Common aliases users type on the command line.
  if (name == "float" || name == "fp32") return DataType::kFloat32;
  if (name == "double" || name == "fp64") return DataType::kFloat64;
  if (name == "half" || name == "fp16") return DataType::kFloat16;
  if (name == "bf16") return DataType::kBFloat16;
  if (name == "int") return DataType::kInt32;
  if (name == "short") return DataType::kInt16;
  return std::nullopt;
}

std::string_view reduce_op_name(ReduceOp op) {
  return kOpNames.at(static_cast<size_t>(op));
}

std::optional<ReduceOp> parse_reduce_op(std::string_view name) {
  for (size_t i = 0; i < kOpNames.size(); ++i)
    if (kOpNames[i] == name) return static_cast<ReduceOp>(i);
  if (name == "avg") return ReduceOp::kAverage;
  if (name == "prod") return ReduceOp::kProduct;
  return std::nullopt;
}

bool reduce_op_supported(ReduceOp op, DataType type) {
  switch (op) {
    case ReduceOp::kBitAnd:
    case ReduceOp::kBitOr:
      return !is_floating(type);
    case ReduceOp::kAverage:
      return type != DataType::kBool;
    case ReduceOp::kAdasum:
      return is_floating(type);
    default:
      return true;
  }
}

std::string reduction_problem(const Reduction& reduction, DataType type) {
  if (!reduce_op_supported(reduction.op, type)) {
    return fmt::format("reduce op {} is not defined for {}", reduce_op_name(reduction.op),
                       dtype_name(type));
  }
  if (!std::isfinite(reduction.prescale)) {
    return fmt::format("prescale factor {} is not finite", reduction.prescale);
  }
  if (!std::isfinite(reduction.postscale)) {
    return fmt::format("postscale factor {} is not finite", reduction.postscale);
  }
  return "";
}

}  // namespace kolo
