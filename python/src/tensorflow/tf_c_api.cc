#include "tensorflow/tf_c_api.h"

#include <dlfcn.h>

namespace kolo::python::tf {
namespace {

// Looks up "TF_<name>" and stores it in `slot`; false when TF lacks it.
template <typename Fn>
bool resolve(void* library, const char* name, Fn* slot, std::string* missing) {
  void* symbol = dlsym(library, (std::string("TF_") + name).c_str());
  if (symbol == nullptr) {
    if (missing->empty()) *missing = std::string("TF_") + name;
    return false;
  }
  *slot = reinterpret_cast<Fn>(symbol);
  return true;
}

}  // namespace

std::string load(const std::string& library_path, Api* api) {
  // RTLD_NOLOAD: the library TensorFlow's own import loaded, never a second
  // copy (two copies would hold two op registries). Never closed: kernels
  // registered with it live as long as the process.
  void* library = dlopen(library_path.c_str(), RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) {
    return "TensorFlow's " + library_path + " is not loaded in this process (import tensorflow " +
           "first)";
  }
  std::string missing;
#define KOLO_TF_RESOLVE(name) resolve(library, #name, &api->name, &missing)
  KOLO_TF_RESOLVE(NewStatus);
  KOLO_TF_RESOLVE(DeleteStatus);
  KOLO_TF_RESOLVE(SetStatus);
  KOLO_TF_RESOLVE(GetCode);
  KOLO_TF_RESOLVE(Message);
  KOLO_TF_RESOLVE(TensorData);
  KOLO_TF_RESOLVE(NumDims);
  KOLO_TF_RESOLVE(Dim);
  KOLO_TF_RESOLVE(TensorType);
  KOLO_TF_RESOLVE(TensorByteSize);
  KOLO_TF_RESOLVE(DeleteTensor);
  KOLO_TF_RESOLVE(NewOpDefinitionBuilder);
  KOLO_TF_RESOLVE(OpDefinitionBuilderAddInput);
  KOLO_TF_RESOLVE(OpDefinitionBuilderAddOutput);
  KOLO_TF_RESOLVE(OpDefinitionBuilderAddAttr);
  KOLO_TF_RESOLVE(OpDefinitionBuilderSetIsStateful);
  KOLO_TF_RESOLVE(OpDefinitionBuilderSetShapeInferenceFunction);
  KOLO_TF_RESOLVE(RegisterOpDefinition);
  KOLO_TF_RESOLVE(NewShapeHandle);
  KOLO_TF_RESOLVE(DeleteShapeHandle);
  KOLO_TF_RESOLVE(ShapeInferenceContextGetInput);
  KOLO_TF_RESOLVE(ShapeInferenceContextSetOutput);
  KOLO_TF_RESOLVE(ShapeInferenceContextSetUnknownShape);
  KOLO_TF_RESOLVE(ShapeInferenceContextNumInputs);
  KOLO_TF_RESOLVE(NewKernelBuilder);
  KOLO_TF_RESOLVE(RegisterKernelBuilder);
  KOLO_TF_RESOLVE(OpKernelConstruction_GetAttrInt64);
  KOLO_TF_RESOLVE(OpKernelConstruction_GetAttrFloat);
  KOLO_TF_RESOLVE(OpKernelConstruction_GetAttrSize);
  KOLO_TF_RESOLVE(OpKernelConstruction_GetAttrString);
  KOLO_TF_RESOLVE(OpKernelConstruction_Failure);
  KOLO_TF_RESOLVE(NumInputs);
  KOLO_TF_RESOLVE(GetInput);
  KOLO_TF_RESOLVE(AllocateOutput);
  KOLO_TF_RESOLVE(OpKernelContext_Failure);
#undef KOLO_TF_RESOLVE
  if (!missing.empty()) {
    return library_path + " lacks " + missing + " (Kolo needs TensorFlow >= 2.5's C API)";
  }
  return "";
}

}  // namespace kolo::python::tf
