// kolo._core.InPlaceOperation: the operation behind one in-place allreduce
// of kolo.torch's hot path (one per gradient of a backward pass).
//
// It has the part of kolo.common.pending.PendingOperation's interface the
// runtime registers, polls and synchronizes through (is_completed, wait,
// outcome), but is made by the binding in the same call that enqueues the
// tensor: built in Python, the object and its wait layers cost ~0.2 us of
// the ~1.3 us the hot path spent in Python per tensor
// (bench/torch_async_paths.py, docs/benchmarks.md).
#pragma once

#include <pybind11/pybind11.h>

#include "py_handle.h"

namespace kolo::python {

class InPlaceOperation {
 public:
  // `tensor`: what the engine writes, returned by outcome() and kept alive
  // until the engine is done with it. `interrupted`: the runtime's
  // InterruptedOperations, which keep(self) after an interrupted wait.
  InPlaceOperation(PyHandle handle, pybind11::object tensor, pybind11::object interrupted)
      : handle_(std::move(handle)),
        tensor_(std::move(tensor)),
        interrupted_(std::move(interrupted)) {}

  bool is_completed() const { return handle_.is_completed(); }

  // Blocks until the engine is done. A wait that raises (Ctrl-C) hands the
  // operation, tensor included, to the interrupted operations first, which
  // hold it until the engine finishes.
  void wait(pybind11::handle self);

  // The tensor; raises KoloInternalError if the operation failed. Only after
  // wait() returned.
  pybind11::object outcome() const;

 private:
  PyHandle handle_;
  pybind11::object tensor_;
  pybind11::object interrupted_;
  bool waited_ok_ = false;
};

// Adds the InPlaceOperation class to the module (Engine.allreduce_in_place_raw
// of raw_binding.h makes them).
void bind_in_place_operation(pybind11::module_& m);

}  // namespace kolo::python
