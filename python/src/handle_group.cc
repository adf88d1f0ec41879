#include "handle_group.h"

#include <pybind11/stl.h>

#include <chrono>

#include "py_handle.h"
#include "status_to_python.h"

namespace py = pybind11;

namespace kolo::python {

bool HandleGroup::is_completed() const {
  for (const Handle& handle : handles_) {
    if (!handle.isCompleted()) return false;
  }
  return true;
}

bool HandleGroup::wait(std::optional<double> timeout_seconds) const {
  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  for (const Handle& handle : handles_) {
    std::optional<double> left;
    if (timeout_seconds) {
      left = *timeout_seconds - std::chrono::duration<double>(Clock::now() - start).count();
    }
    if (!wait_for_handle(handle, left)) return false;
  }
  return true;
}

bool HandleGroup::wait_succeeded() const {
  wait(std::nullopt);
  for (const Handle& handle : handles_) {
    if (!handle.status().ok()) return false;
  }
  return true;
}

void HandleGroup::check() const {
  for (const Handle& handle : handles_) raise_if_error(handle.status());
}

void bind_handle_group(py::module_& m) {
  py::class_<HandleGroup> group(m, "HandleGroup");
  def_completion(group).def("__len__", &HandleGroup::size);
}

}  // namespace kolo::python
