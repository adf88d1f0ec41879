#pragma once

#include <pybind11/pybind11.h>

namespace kolo::python {

void bind_settings(pybind11::module_& m);

}  // namespace kolo::python
