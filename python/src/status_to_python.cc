#include "status_to_python.h"

#include "kolo/engine.h"

namespace py = pybind11;

namespace kolo::python {
namespace {

// The exception type lives in the module object (owned by the interpreter),
// not in a C++ global: looked up by name when needed.
py::object internal_error_type() {
  return py::module_::import("kolo._core").attr("KoloInternalError");
}

py::object removed_type() {
  return py::module_::import("kolo._core").attr("WorkerRemoved");
}

[[noreturn]] void throw_python(const Status& status) {
  switch (status.code()) {
    case StatusCode::kInvalidArgument:
      // Bad arguments detected before anything ran: the caller's mistake.
      throw py::value_error(status.message());
    case StatusCode::kNotFound:
      throw py::value_error(status.message());
    case StatusCode::kRemoved:
      // Not a failure to retry: the elastic launcher ended this worker's part.
      PyErr_SetString(removed_type().ptr(), status.message().c_str());
      throw py::error_already_set();
    default:
      // Failures of the job (lost peer, timeout, mismatch between ranks,
      // shutdown): what Horovod reports as HorovodInternalError, and what
      // elastic training catches to reset.
      PyErr_SetString(internal_error_type().ptr(), status.message().c_str());
      throw py::error_already_set();
  }
}

}  // namespace

void register_exceptions(py::module_& module) {
  py::exception<Exception>(module, "KoloInternalError", PyExc_RuntimeError);
  // A plain Exception subclass, so `except KoloInternalError` never catches it.
  module.attr("WorkerRemoved") = py::reinterpret_steal<py::object>(
      PyErr_NewException("kolo._core.WorkerRemoved", nullptr, nullptr));
  py::register_exception_translator([](std::exception_ptr error) {
    if (!error) return;
    try {
      std::rethrow_exception(error);
    } catch (const Exception& e) {
      try {
        throw_python(e.status());
      } catch (py::error_already_set& python_error) {
        python_error.restore();
      } catch (const py::value_error& value_error) {
        PyErr_SetString(PyExc_ValueError, value_error.what());
      }
    }
  });
}

void raise_if_error(const Status& status) {
  if (status.ok()) return;
  // Whatever ends an operation after it was accepted (a mismatch found in
  // negotiation, a lost peer, shutdown) fails the job's step: Horovod's
  // synchronize() raises HorovodInternalError for all of them.
  PyErr_SetString(internal_error_type().ptr(), status.message().c_str());
  throw py::error_already_set();
}

}  // namespace kolo::python
