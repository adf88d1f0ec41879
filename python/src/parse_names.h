// The names Python passes for dtypes and reduce ops, parsed or refused with a
// ValueError.
#pragma once

#include <pybind11/pybind11.h>

#include <optional>
#include <string>

#include "kolo/types.h"

namespace kolo::python {

inline std::optional<DataType> dtype_from_name(const std::optional<std::string>& name) {
  if (!name) return std::nullopt;
  std::optional<DataType> dtype = parse_dtype(*name);
  if (!dtype) throw pybind11::value_error("kolo: unknown dtype '" + *name + "'");
  return dtype;
}

inline ReduceOp reduce_op_from_name(const std::string& name) {
  std::optional<ReduceOp> op = parse_reduce_op(name);
  if (!op) throw pybind11::value_error("kolo: unknown reduce op '" + name + "'");
  return *op;
}

}  // namespace kolo::python
