// kolo._core's Handle: an engine Handle seen from Python, with the dtype
// its output leaves as.
#pragma once

#include <pybind11/pybind11.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
#include <vector>

#include "dlpack_view.h"
#include "kolo/engine.h"
#include "status_to_python.h"

namespace kolo::python {

// Waits for `handle` with the GIL released, in short slices so Ctrl-C still
// reaches Python (raises its KeyboardInterrupt). Returns false if
// `timeout_seconds` passed first.
inline bool wait_for_handle(const Handle& handle, std::optional<double> timeout_seconds) {
  // A finished handle (most of them, by the time a step synchronizes its
  // gradients) costs no GIL hand-off.
  if (handle.isCompleted()) return true;
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  constexpr auto kSlice = std::chrono::milliseconds(100);
  for (;;) {
    auto slice = kSlice;
    if (timeout_seconds) {
      const auto left = std::chrono::duration<double>(*timeout_seconds) - (Clock::now() - start);
      if (left <= std::chrono::duration<double>::zero()) return handle.isCompleted();
      slice = std::min(kSlice, std::chrono::duration_cast<std::chrono::milliseconds>(left) +
                                   std::chrono::milliseconds(1));
    }
    bool done = false;
    {
      pybind11::gil_scoped_release release;
      done = handle.wait(slice);
    }
    if (done) return true;
    if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
  }
}

// Adds the completion methods PyHandle and HandleGroup share (what
// kolo.common.pending.PendingOperation calls on its handles) to `cls`;
// needs pybind11/stl.h where it is used (wait's optional timeout).
template <class T>
pybind11::class_<T>& def_completion(pybind11::class_<T>& cls) {
  return cls.def("is_completed", &T::is_completed)
      .def("wait", &T::wait, pybind11::arg("timeout") = pybind11::none())
      .def("wait_succeeded", &T::wait_succeeded)
      .def("check", &T::check);
}

// A finished or running operation plus what is needed to hand its output out.
class PyHandle {
 public:
  PyHandle(Handle handle, DataType dtype) : handle_(std::move(handle)), dtype_(dtype) {}

  bool is_completed() const { return handle_.isCompleted(); }

  // wait_for_handle() of this operation.
  bool wait(std::optional<double> timeout_seconds) const {
    return wait_for_handle(handle_, timeout_seconds);
  }

  // Waits without a time limit, then says whether the operation succeeded:
  // one call where wait() then check() would be two (a step pays this per
  // gradient). The error itself is check()'s to raise.
  bool wait_succeeded() const {
    wait(std::nullopt);
    return handle_.status().ok();
  }

  // Raises KoloInternalError if the operation failed; must be finished.
  void check() const { raise_if_error(handle_.status()); }

  DLPackArray output() const {
    check();
    return DLPackArray(handle_, dtype_, handle_.shape());
  }
  std::vector<int64_t> received_splits() const { return handle_.received_splits(); }
  int64_t value() const { return handle_.value(); }

 private:
  Handle handle_;
  DataType dtype_;
};

}  // namespace kolo::python
