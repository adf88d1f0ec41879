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

// A finished or running operation plus what is needed to hand its output out.
class PyHandle {
 public:
  PyHandle(Handle handle, DataType dtype) : handle_(std::move(handle)), dtype_(dtype) {}

  bool is_completed() const { return handle_.isCompleted(); }

  // Waits with the GIL released, in short slices so Ctrl-C still reaches
  // Python. Returns false if `timeout_seconds` passed first.
  bool wait(std::optional<double> timeout_seconds) const {
    // A finished handle (most of them, by the time a step synchronizes its
    // gradients) costs no GIL hand-off.
    if (handle_.isCompleted()) return true;
    using Clock = std::chrono::steady_clock;
    const auto start = Clock::now();
    constexpr auto kSlice = std::chrono::milliseconds(100);
    for (;;) {
      auto slice = kSlice;
      if (timeout_seconds) {
        const auto left = std::chrono::duration<double>(*timeout_seconds) - (Clock::now() - start);
        if (left <= std::chrono::duration<double>::zero()) return handle_.isCompleted();
        slice = std::min(kSlice, std::chrono::duration_cast<std::chrono::milliseconds>(left) +
                                     std::chrono::milliseconds(1));
      }
      bool done = false;
      {
        pybind11::gil_scoped_release release;
        done = handle_.wait(slice);
      }
      if (done) return true;
      if (PyErr_CheckSignals() != 0) throw pybind11::error_already_set();
    }
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
