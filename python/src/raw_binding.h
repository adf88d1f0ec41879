// The engine's entry points for callers that describe their tensors by data
// pointer, shape and dtype code instead of a DLPack export.
//
// Why: a step of many small tensors (a backward pass) is dominated by the
// per-call cost of the binding. Exporting a torch tensor through DLPack costs
// about a microsecond per tensor, twice for an in-place op; kolo.torch reads
// data_ptr(), shape and dtype itself for a fraction of that. The caller must
// keep every tensor it names alive and unmoved until the handle completes, as
// it already does for DLPack views (kolo.common.pending).
#pragma once

#include <pybind11/pybind11.h>

#include "kolo/engine.h"

namespace kolo::python {

// Adds allreduce_raw, allreduce_in_place_raw and grouped_allreduce_raw to the
// Engine class, and to the module InPlaceOperation and dtype_code(name), which
// the callers build their dtype tables with.
void bind_raw_operations(pybind11::module_& m, pybind11::class_<Engine>& engine);

}  // namespace kolo::python
