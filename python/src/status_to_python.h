// The one place where Kolo's Status codes become Python exceptions.
#pragma once

#include <pybind11/pybind11.h>

#include "kolo/status.h"

namespace kolo::python {

// Creates kolo._core.KoloInternalError (a RuntimeError) in `module` and
// translates kolo::Exception wherever a bound function throws one.
void register_exceptions(pybind11::module_& module);

// Raises KoloInternalError for the failed status of a finished operation
// (no-op for OK).
void raise_if_error(const Status& status);

}  // namespace kolo::python
