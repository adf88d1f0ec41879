#include "dlpack_view.h"

#include <dlpack/dlpack.h>

#include <cstring>
#include <memory>
#include <stdexcept>
#include <string_view>

#include "gpu_binding.h"

namespace py = pybind11;

namespace kolo::python {
namespace {

constexpr const char* kCapsuleName = "dltensor";

std::optional<DataType> from_dl(DLDataType type) {
  if (type.lanes != 1) return std::nullopt;
  switch (type.code) {
    case kDLUInt:
      if (type.bits == 8) return DataType::kUInt8;
      break;
    case kDLInt:
      if (type.bits == 8) return DataType::kInt8;
      if (type.bits == 16) return DataType::kInt16;
      if (type.bits == 32) return DataType::kInt32;
      if (type.bits == 64) return DataType::kInt64;
      break;
    case kDLFloat:
      if (type.bits == 16) return DataType::kFloat16;
      if (type.bits == 32) return DataType::kFloat32;
      if (type.bits == 64) return DataType::kFloat64;
      break;
    case kDLBfloat:
      if (type.bits == 16) return DataType::kBFloat16;
      break;
    default:
      break;
  }
  return std::nullopt;
}

DLDataType to_dl(DataType type) {
  switch (type) {
    case DataType::kUInt8:
    case DataType::kBool:  // leaves as uint8; the Python side views it as bool
      return {kDLUInt, 8, 1};
    case DataType::kInt8:
      return {kDLInt, 8, 1};
    case DataType::kInt16:
      return {kDLInt, 16, 1};
    case DataType::kInt32:
      return {kDLInt, 32, 1};
    case DataType::kInt64:
      return {kDLInt, 64, 1};
    case DataType::kFloat16:
      return {kDLFloat, 16, 1};
    case DataType::kBFloat16:
      return {kDLBfloat, 16, 1};
    case DataType::kFloat32:
      return {kDLFloat, 32, 1};
    case DataType::kFloat64:
      return {kDLFloat, 64, 1};
  }
  throw std::logic_error("unknown kolo dtype");
}

std::string describe(DLDataType type) {
  const char* kind = type.code == kDLInt      ? "int"
                     : type.code == kDLUInt   ? "uint"
                     : type.code == kDLFloat  ? "float"
                     : type.code == kDLBfloat ? "bfloat"
                                              : "code";
  return std::string(kind) + std::to_string(type.bits) +
         (type.lanes == 1 ? "" : "x" + std::to_string(type.lanes));
}

// Row-major contiguity; size-1 dimensions may carry any stride, and a
// tensor with no elements any strides at all (torch exports [0, 3] with
// strides [1, 1]).
bool contiguous(const DLTensor& t) {
  if (t.strides == nullptr) return true;
  for (int d = 0; d < t.ndim; ++d) {
    if (t.shape[d] == 0) return true;
  }
  int64_t expected = 1;
  for (int d = t.ndim - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expected) return false;
    expected *= t.shape[d];
  }
  return true;
}

py::capsule capsule_of(const py::object& source) {
  if (py::isinstance<py::capsule>(source)) return py::reinterpret_borrow<py::capsule>(source);
  if (!py::hasattr(source, "__dlpack__")) {
    throw py::type_error(
        "kolo: expected a tensor or array supporting DLPack (torch.Tensor, "
        "numpy.ndarray, ...), got " +
        std::string(py::str(py::type::handle_of(source).attr("__name__"))));
  }
  return source.attr("__dlpack__")().cast<py::capsule>();
}

// Owns what a DLManagedTensor we export points to.
struct ExportContext {
  std::shared_ptr<const void> memory;  // keeps the engine's output alive
  std::vector<int64_t> shape;
  DLManagedTensor managed{};
};

void delete_export(DLManagedTensor* managed) {
  delete static_cast<ExportContext*>(managed->manager_ctx);
}

// The capsule's destructor runs only if no consumer took ownership (a
// consumer renames it "used_dltensor" and calls the deleter itself).
void capsule_destructor(PyObject* capsule) {
  if (std::strcmp(PyCapsule_GetName(capsule), kCapsuleName) != 0) return;
  auto* managed = static_cast<DLManagedTensor*>(PyCapsule_GetPointer(capsule, kCapsuleName));
  if (managed != nullptr && managed->deleter != nullptr) managed->deleter(managed);
}

}  // namespace

TensorView view_of(const py::object& source, std::optional<DataType> dtype_override) {
  py::capsule capsule = capsule_of(source);
  if (std::string_view(capsule.name()) != kCapsuleName) {
    throw py::value_error("kolo: this DLPack capsule was already consumed");
  }
  // Read-only use: the capsule (and the producer's memory) stays owned by
  // `source`, which the Python layer keeps alive until the handle is done.
  const auto* managed = capsule.get_pointer<DLManagedTensor>();
  const DLTensor& t = managed->dl_tensor;
  const int32_t device = engine_device(t.device);  // raises with the reason when not usable
  std::optional<DataType> dtype = from_dl(t.dtype);
  if (!dtype) throw py::type_error("kolo: unsupported tensor dtype " + describe(t.dtype));
  if (dtype_override) {
    if (dtype_size(*dtype_override) != dtype_size(*dtype)) {
      throw py::type_error("kolo: dtype override does not match the element size");
    }
    dtype = dtype_override;
  }
  if (!contiguous(t)) throw py::value_error("kolo: tensor must be contiguous");
  TensorView view;
  view.mutable_data = static_cast<char*>(t.data) + t.byte_offset;
  view.tensor.data = view.mutable_data;
  view.tensor.dtype = *dtype;
  view.tensor.shape.assign(t.shape, t.shape + t.ndim);
  view.tensor.device = device;
  return view;
}

DLPackArray::DLPackArray(Handle handle, DataType dtype, std::vector<int64_t> shape)
    : dtype_(dtype), shape_(std::move(shape)) {
  auto owner = std::make_shared<const Handle>(std::move(handle));
  memory_ = std::shared_ptr<const void>(owner, owner->data());
}

DLPackArray::DLPackArray(std::shared_ptr<const void> memory, DataType dtype,
                         std::vector<int64_t> shape)
    : memory_(std::move(memory)), dtype_(dtype), shape_(std::move(shape)) {}

py::capsule DLPackArray::dlpack(const py::object& stream) const {
  if (!stream.is_none()) throw py::value_error("kolo: CPU arrays take no stream");
  auto context = std::make_unique<ExportContext>();
  context->memory = memory_;
  context->shape = shape_;
  // A zero-size array still needs a non-null, aligned pointer for some
  // consumers; it is never dereferenced.
  static const int64_t kEmpty = 0;  // immutable
  const void* data = memory_.get() != nullptr ? memory_.get() : &kEmpty;
  DLTensor& t = context->managed.dl_tensor;
  t.data = const_cast<void*>(data);  // DLPack has no const; consumers may write to their copy
  t.device = {kDLCPU, 0};
  t.ndim = static_cast<int32_t>(context->shape.size());
  t.dtype = to_dl(dtype_);
  t.shape = context->shape.data();
  t.strides = nullptr;
  t.byte_offset = 0;
  context->managed.manager_ctx = context.get();
  context->managed.deleter = delete_export;
  DLManagedTensor* managed = &context.release()->managed;
  return py::capsule(managed, kCapsuleName, capsule_destructor);
}

py::tuple DLPackArray::dlpack_device() const {
  return py::make_tuple(int(kDLCPU), 0);
}

std::string DLPackArray::dtype_name() const {
  return std::string(kolo::dtype_name(dtype_));
}

}  // namespace kolo::python
