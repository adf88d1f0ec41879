// What Kolo's TensorFlow kernels reach from inside TensorFlow: the resolved
// C API table and the engine of the Python runtime.
//
// Both are process-wide because TensorFlow, not Kolo, constructs and calls
// the kernels: a kernel gets only TensorFlow's context, so there is no
// object to carry the engine in (the same reason as the C API's default
// engine in src/core/c_api.cc). The engine slot is filled by
// kolo.common.runtime at init and emptied before its shutdown.
#pragma once

#include <pybind11/pybind11.h>

#include <functional>
#include <mutex>
#include <shared_mutex>
#include <string>

#include "kolo/engine.h"
#include "tensorflow/tf_c_api.h"

namespace kolo::python::tf {

class Bridge {
 public:
  static Bridge& get();

  // Resolves the C API from `library_path` and registers Kolo's ops and
  // kernels; once per process (later calls return the first outcome).
  // Returns "" or why it failed.
  std::string register_ops(const std::string& library_path);
  const Api& api() const { return api_; }

  void attach(Engine* engine);
  void detach();

  // Runs `enqueue` on the attached engine; throws kolo::Exception when Kolo
  // is not initialized. The engine cannot be detached (and shut down) while
  // an enqueue runs; waiting on the returned handle needs no lock.
  Handle submit(const std::function<Handle(Engine&)>& enqueue);
  std::vector<Handle> submit_group(const std::function<std::vector<Handle>(Engine&)>& enqueue);

 private:
  Bridge() = default;

  std::once_flag registered_;
  std::string register_error_;
  Api api_{};
  std::shared_mutex engine_mutex_;
  Engine* engine_ = nullptr;  // owned by the Python runtime
};

// kolo._core.tensorflow_register_ops, attach_kernel_engine, detach_kernel_engine.
void bind_tensorflow(pybind11::module_& m);

// Defined in tf_kernels.cc: declares the ops and their CPU kernels.
std::string register_kolo_ops(const Api& api);

}  // namespace kolo::python::tf
