#include "tensorflow/tf_bridge.h"

#include <pybind11/pybind11.h>

namespace kolo::python::tf {

Bridge& Bridge::get() {
  // Never destroyed: TensorFlow may still run a kernel while static
  // destructors run at exit.
  static auto* bridge = new Bridge;
  return *bridge;
}

std::string Bridge::register_ops(const std::string& library_path) {
  std::call_once(registered_, [&] {
    register_error_ = load(library_path, &api_);
    if (register_error_.empty()) register_error_ = register_kolo_ops(api_);
  });
  return register_error_;
}

void Bridge::attach(Engine* engine) {
  std::unique_lock lock(engine_mutex_);
  engine_ = engine;
}

void Bridge::detach() {
  std::unique_lock lock(engine_mutex_);
  engine_ = nullptr;
}

Handle Bridge::submit(const std::function<Handle(Engine&)>& enqueue) {
  std::shared_lock lock(engine_mutex_);
  if (engine_ == nullptr) {
    throw Exception(kolo::Status(StatusCode::kInvalidArgument,
                                 "Kolo has not been initialized; call hvd.init() first"));
  }
  return enqueue(*engine_);
}

std::vector<Handle> Bridge::submit_group(
    const std::function<std::vector<Handle>(Engine&)>& enqueue) {
  std::shared_lock lock(engine_mutex_);
  if (engine_ == nullptr) {
    throw Exception(kolo::Status(StatusCode::kInvalidArgument,
                                 "Kolo has not been initialized; call hvd.init() first"));
  }
  return enqueue(*engine_);
}

void bind_tensorflow(pybind11::module_& m) {
  namespace py = pybind11;
  m.def(
      "tensorflow_register_ops",
      [](const std::string& library_path) {
        std::string error = Bridge::get().register_ops(library_path);
        if (!error.empty()) throw std::runtime_error("kolo.tensorflow: " + error);
      },
      py::arg("library_path"),
      "Registers Kolo's TensorFlow ops and kernels with the loaded TensorFlow.");
  m.def(
      "attach_kernel_engine", [](Engine& engine) { Bridge::get().attach(&engine); },
      py::arg("engine"), "The engine framework kernels (TensorFlow) submit to.");
  m.def(
      "detach_kernel_engine", [] { Bridge::get().detach(); },
      "Framework kernels fail with 'not initialized' from now on.");
}

}  // namespace kolo::python::tf
