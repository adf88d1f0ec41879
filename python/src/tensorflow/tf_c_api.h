// The few functions of TensorFlow's stable C API for ops and kernels
// (tensorflow/c/c_api.h, tf_tensor.h, tf_status.h, kernels.h, ops.h) that
// Kolo's TF ops use, declared here from their documented signatures and
// resolved at run time from the libtensorflow_framework the user's TF
// loaded. Nothing is compiled against TF headers, so one Kolo build serves
// every TF 2.x that exports these names (they are part of the C ABI TF
// keeps stable for plugins).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace kolo::python::tf {

// Opaque to callers; TensorFlow owns them.
struct Status;
struct Tensor;
struct OpDefinitionBuilder;
struct KernelBuilder;
struct OpKernelConstruction;
struct OpKernelContext;
struct ShapeInferenceContext;
struct ShapeHandle;

// TF_DataType values (tf_datatype.h) of the dtypes Kolo reduces.
enum DataType : int {
  kFloat = 1,
  kDouble = 2,
  kInt32 = 3,
  kUInt8 = 4,
  kInt16 = 5,
  kInt8 = 6,
  kInt64 = 9,
  kBool = 10,
  kBFloat16 = 14,
  kHalf = 19,
};

// TF_Code values (tf_status.h) Kolo reports.
enum Code : int {
  kOk = 0,
  kInvalidArgument = 3,
  kAborted = 10,
  kInternal = 13,
};

struct StringView {  // TF_StringView
  const char* data;
  size_t len;
};

// Function pointers, one per C API function used; filled by load().
struct Api {
  Status* (*NewStatus)();
  void (*DeleteStatus)(Status*);
  void (*SetStatus)(Status*, int code, const char* message);
  int (*GetCode)(const Status*);
  const char* (*Message)(const Status*);

  void* (*TensorData)(const Tensor*);
  int (*NumDims)(const Tensor*);
  int64_t (*Dim)(const Tensor*, int index);
  int (*TensorType)(const Tensor*);
  size_t (*TensorByteSize)(const Tensor*);
  void (*DeleteTensor)(Tensor*);

  OpDefinitionBuilder* (*NewOpDefinitionBuilder)(const char* op_name);
  void (*OpDefinitionBuilderAddInput)(OpDefinitionBuilder*, const char* spec);
  void (*OpDefinitionBuilderAddOutput)(OpDefinitionBuilder*, const char* spec);
  void (*OpDefinitionBuilderAddAttr)(OpDefinitionBuilder*, const char* spec);
  void (*OpDefinitionBuilderSetIsStateful)(OpDefinitionBuilder*, bool);
  void (*OpDefinitionBuilderSetShapeInferenceFunction)(OpDefinitionBuilder*,
                                                       void (*fn)(ShapeInferenceContext*, Status*));
  void (*RegisterOpDefinition)(OpDefinitionBuilder*, Status*);

  ShapeHandle* (*NewShapeHandle)();
  void (*DeleteShapeHandle)(ShapeHandle*);
  void (*ShapeInferenceContextGetInput)(ShapeInferenceContext*, int index, ShapeHandle*, Status*);
  void (*ShapeInferenceContextSetOutput)(ShapeInferenceContext*, int index, ShapeHandle*, Status*);
  void (*ShapeInferenceContextSetUnknownShape)(ShapeInferenceContext*, Status*);
  int64_t (*ShapeInferenceContextNumInputs)(ShapeInferenceContext*);

  KernelBuilder* (*NewKernelBuilder)(const char* op_name, const char* device_name,
                                     void* (*create)(OpKernelConstruction*),
                                     void (*compute)(void*, OpKernelContext*),
                                     void (*destroy)(void*));
  void (*RegisterKernelBuilder)(const char* kernel_name, KernelBuilder*, Status*);

  void (*OpKernelConstruction_GetAttrInt64)(OpKernelConstruction*, const char* name, int64_t*,
                                            Status*);
  void (*OpKernelConstruction_GetAttrFloat)(OpKernelConstruction*, const char* name, float*,
                                            Status*);
  void (*OpKernelConstruction_GetAttrSize)(OpKernelConstruction*, const char* name,
                                           int32_t* list_size, int32_t* total_size, Status*);
  void (*OpKernelConstruction_GetAttrString)(OpKernelConstruction*, const char* name, char* value,
                                             size_t max_length, Status*);
  void (*OpKernelConstruction_Failure)(OpKernelConstruction*, Status*);

  int (*NumInputs)(OpKernelContext*);
  void (*GetInput)(OpKernelContext*, int index, Tensor**, Status*);
  Tensor* (*AllocateOutput)(OpKernelContext*, int index, int dtype, const int64_t* dims,
                            int num_dims, size_t len, Status*);
  void (*OpKernelContext_Failure)(OpKernelContext*, Status*);
};

// Resolves every function from the already loaded library at `library_path`
// (TensorFlow's libtensorflow_framework.so.2). Returns "" and fills `api`,
// or the reason it could not (the first name that is missing).
std::string load(const std::string& library_path, Api* api);

}  // namespace kolo::python::tf
