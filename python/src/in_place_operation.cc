#include "in_place_operation.h"

namespace py = pybind11;

namespace kolo::python {

void InPlaceOperation::wait(py::handle self) {
  try {
    waited_ok_ = handle_.wait_succeeded();
  } catch (...) {
    // The caller's frames unwind and may drop the last reference to the
    // tensor while the engine still writes it.
    interrupted_.attr("keep")(self);
    throw;
  }
}

py::object InPlaceOperation::outcome() const {
  if (!waited_ok_) handle_.check();
  return tensor_;
}

void bind_in_place_operation(py::module_& m) {
  py::class_<InPlaceOperation>(m, "InPlaceOperation")
      .def("is_completed", &InPlaceOperation::is_completed)
      .def("wait", [](py::handle self) { self.cast<InPlaceOperation&>().wait(self); })
      .def("outcome", &InPlaceOperation::outcome);
}

}  // namespace kolo::python
