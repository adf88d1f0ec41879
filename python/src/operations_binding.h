// kolo._core.operations(): the engine's operation table
// (src/core/operation_table.h) as a list of dicts, so Python tests can check
// that every operation has its Engine method and its framework wrappers.
#pragma once

#include <pybind11/pybind11.h>

namespace kolo::python {

void bind_operations(pybind11::module_& m);

}  // namespace kolo::python
