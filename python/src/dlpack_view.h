// DLPack in both directions, without knowing which framework is on the other
// side: inputs are read from any object with __dlpack__ (or a "dltensor"
// capsule) and become kolo::Tensor views of the same memory; outputs the
// engine allocated leave as DLPackArray objects that torch.from_dlpack and
// numpy.from_dlpack consume without a copy.
#pragma once

#include <pybind11/pybind11.h>

#include <memory>
#include <optional>
#include <string>

#include "kolo/engine.h"

namespace kolo::python {

// A contiguous CPU (or, later, GPU) view of a framework tensor. The caller
// keeps `source` alive until the operation completes; the view does not own
// the memory.
struct TensorView {
  Tensor tensor;
  void* mutable_data = nullptr;  // the same pointer, for in-place outputs
};

// `dtype_override` lets the caller pass bool tensors viewed as uint8 (DLPack
// 0.6 as exported by torch 1.x and NumPy 1.2x has no bool type).
TensorView view_of(const pybind11::object& source, std::optional<DataType> dtype_override);

// Engine-owned memory leaving as an array: the output of a finished
// operation (allgather, alltoall, reducescatter), kept alive by the Handle it
// came from, or a block of the engine's output cache for an out-of-place
// result (Engine::allocate_output), which goes back to the cache once the
// consumer's array and every export of it are gone.
class DLPackArray {
 public:
  DLPackArray(Handle handle, DataType dtype, std::vector<int64_t> shape);
  // `memory`: shares ownership of the bytes it points to (see
  // std::shared_ptr's aliasing constructor).
  DLPackArray(std::shared_ptr<const void> memory, DataType dtype, std::vector<int64_t> shape);

  pybind11::capsule dlpack(const pybind11::object& stream) const;
  pybind11::tuple dlpack_device() const;
  const std::vector<int64_t>& shape() const { return shape_; }
  std::string dtype_name() const;

 private:
  std::shared_ptr<const void> memory_;
  DataType dtype_;
  std::vector<int64_t> shape_;
};

}  // namespace kolo::python
