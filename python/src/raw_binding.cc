#include "raw_binding.h"

#include <pybind11/stl.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "handle_group.h"
#include "in_place_operation.h"
#include "parse_names.h"
#include "py_handle.h"

namespace py = pybind11;

namespace kolo::python {
namespace {

DataType dtype_of_code(int code) {
  if (code < 0 || code >= kNumDataTypes) {
    throw py::value_error("kolo: unknown dtype code " + std::to_string(code));
  }
  return static_cast<DataType>(code);
}

// A tensor with elements needs memory; the pointer is the caller's word
// otherwise (it holds the tensor).
Tensor raw_tensor(uintptr_t data, std::vector<int64_t> shape, DataType dtype) {
  int64_t elements = 1;
  for (int64_t d : shape) {
    if (d < 0) throw py::value_error("kolo: a tensor shape has no negative sizes");
    elements *= d;
  }
  if (data == 0 && elements != 0) throw py::value_error("kolo: a tensor with elements has no data");
  return Tensor{reinterpret_cast<const void*>(data), dtype, std::move(shape), kCpuDevice};
}

// allreduce_raw's whole work; allreduce_in_place_raw wraps its handle.
PyHandle raw_allreduce(Engine& e, uintptr_t input, uintptr_t output, std::vector<int64_t> shape,
                       int dtype_code, const std::string& op, double prescale, double postscale,
                       std::string name, int32_t process_set) {
  const DataType dtype = dtype_of_code(dtype_code);
  Tensor in = raw_tensor(input, std::move(shape), dtype);
  if (output == 0 && in.data != nullptr) {
    throw py::value_error("kolo: an allreduce needs an output");
  }
  return PyHandle(e.allreduce(std::move(in), reinterpret_cast<void*>(output),
                              ReduceOptions{reduce_op_from_name(op), prescale, postscale,
                                            std::move(name), process_set}),
                  dtype);
}

}  // namespace

void bind_raw_operations(py::module_& m, py::class_<Engine>& engine) {
  bind_in_place_operation(m);
  bind_handle_group(m);
  m.def(
      "dtype_code",
      [](const std::string& name) { return static_cast<int>(*dtype_from_name(name)); },
      py::arg("name"), "The code allreduce_raw takes for the engine dtype `name`.");

  // Positional arguments only: keyword matching is a measurable share of a
  // small tensor's cost.
  engine.def(
      "allreduce_raw",
      [](Engine& e, uintptr_t input, uintptr_t output, std::vector<int64_t> shape, int dtype_code,
         const std::string& op, double prescale, double postscale, std::string name,
         int32_t process_set) {
        return raw_allreduce(e, input, output, std::move(shape), dtype_code, op, prescale,
                             postscale, std::move(name), process_set);
      },
      "allreduce(input, output, ...) of tensors given as (data pointer, shape, dtype code).");

  // kolo.torch's hot path: allreduce_raw in place, returning the operation
  // the runtime registers rather than a bare handle.
  engine.def(
      "allreduce_in_place_raw",
      [](Engine& e, uintptr_t data, std::vector<int64_t> shape, int dtype_code,
         const std::string& op, double prescale, double postscale, std::string name,
         int32_t process_set, py::object tensor, py::object interrupted) {
        return InPlaceOperation(raw_allreduce(e, data, data, std::move(shape), dtype_code, op,
                                              prescale, postscale, std::move(name), process_set),
                                std::move(tensor), std::move(interrupted));
      },
      "allreduce_raw(data, data, ...) whose operation (kolo._core.InPlaceOperation) returns "
      "`tensor` and hands itself to `interrupted` after an interrupted wait.");

  engine.def(
      "grouped_allreduce_raw",
      [](Engine& e, const std::vector<uintptr_t>& inputs, const std::vector<uintptr_t>& outputs,
         std::vector<std::vector<int64_t>> shapes, const std::vector<int>& dtype_codes,
         const std::string& op, double prescale, double postscale, std::string name,
         int32_t process_set) {
        if (inputs.size() != outputs.size() || inputs.size() != shapes.size() ||
            inputs.size() != dtype_codes.size()) {
          throw py::value_error("kolo: a group needs as many outputs, shapes and dtypes as inputs");
        }
        std::vector<Tensor> tensors;
        std::vector<void*> out_ptrs;
        tensors.reserve(inputs.size());
        out_ptrs.reserve(inputs.size());
        for (size_t i = 0; i < inputs.size(); ++i) {
          tensors.push_back(
              raw_tensor(inputs[i], std::move(shapes[i]), dtype_of_code(dtype_codes[i])));
          out_ptrs.push_back(reinterpret_cast<void*>(outputs[i]));
        }
        return HandleGroup(e.grouped_allreduce(
            tensors, out_ptrs,
            {reduce_op_from_name(op), prescale, postscale, std::move(name), process_set}));
      },
      "grouped_allreduce of tensors given as (data pointers, shapes, dtype codes); one "
      "kolo._core.HandleGroup for the whole group.");
}

}  // namespace kolo::python
