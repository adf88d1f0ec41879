// Kolo's TensorFlow ops (KoloAllreduce, KoloGroupedAllreduce, KoloAllgather,
// KoloGroupedAllgather, KoloBroadcast, KoloAlltoall, KoloReducescatter,
// KoloGroupedReducescatter) and their CPU kernels,
// declared through TensorFlow's C API (tf_c_api.h). A kernel reads its
// inputs in place, submits them to the engine, and blocks until the engine
// finished: eager ops run on the caller's thread, and inside tf.function the
// ops are stateful, so TensorFlow's automatic control dependencies run them
// one after another in program order on every rank (no two ranks can block
// in different collectives).
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tensorflow/tf_bridge.h"

namespace kolo::python::tf {
namespace {

constexpr const char* kTypes =
    "{half, bfloat16, float, double, uint8, int8, int16, int32, int64, bool}";

std::optional<kolo::DataType> kolo_dtype(int tf_dtype) {
  switch (tf_dtype) {
    case kFloat:
      return kolo::DataType::kFloat32;
    case kDouble:
      return kolo::DataType::kFloat64;
    case kInt32:
      return kolo::DataType::kInt32;
    case kUInt8:
      return kolo::DataType::kUInt8;
    case kInt16:
      return kolo::DataType::kInt16;
    case kInt8:
      return kolo::DataType::kInt8;
    case kInt64:
      return kolo::DataType::kInt64;
    case kBool:
      return kolo::DataType::kBool;
    case kBFloat16:
      return kolo::DataType::kBFloat16;
    case kHalf:
      return kolo::DataType::kFloat16;
    default:
      return std::nullopt;
  }
}

// A TF_Status that is deleted with its scope.
class ScopedStatus {
 public:
  explicit ScopedStatus(const Api& api) : api_(api), status_(api.NewStatus()) {}
  ~ScopedStatus() { api_.DeleteStatus(status_); }
  ScopedStatus(const ScopedStatus&) = delete;
  ScopedStatus& operator=(const ScopedStatus&) = delete;
  Status* get() const { return status_; }
  bool ok() const { return api_.GetCode(status_) == kOk; }
  // Throws what TensorFlow reported as a Kolo exception, so one catch in the
  // kernel turns every failure into the op's error.
  void check(const char* what) const {
    if (!ok()) {
      throw Exception(
          kolo::Status(StatusCode::kInternal, std::string(what) + ": " + api_.Message(status_)));
    }
  }

 private:
  const Api& api_;
  Status* status_;
};

// An input or output tensor, released to TensorFlow with its scope.
class ScopedTensor {
 public:
  ScopedTensor(const Api& api, Tensor* tensor) : api_(api), tensor_(tensor) {}
  ~ScopedTensor() {
    if (tensor_ != nullptr) api_.DeleteTensor(tensor_);
  }
  ScopedTensor(ScopedTensor&& other) noexcept : api_(other.api_), tensor_(other.tensor_) {
    other.tensor_ = nullptr;
  }
  ScopedTensor(const ScopedTensor&) = delete;
  ScopedTensor& operator=(const ScopedTensor&) = delete;
  ScopedTensor& operator=(ScopedTensor&&) = delete;

  std::vector<int64_t> dims() const {
    std::vector<int64_t> dims(static_cast<size_t>(api_.NumDims(tensor_)));
    for (size_t i = 0; i < dims.size(); ++i) dims[i] = api_.Dim(tensor_, static_cast<int>(i));
    return dims;
  }
  int tf_dtype() const { return api_.TensorType(tensor_); }
  size_t bytes() const { return api_.TensorByteSize(tensor_); }
  void* data() const { return api_.TensorData(tensor_); }

  // The engine's view of this tensor's memory.
  kolo::Tensor view() const {
    std::optional<kolo::DataType> dtype = kolo_dtype(tf_dtype());
    if (!dtype) {
      throw Exception(
          kolo::Status(StatusCode::kInvalidArgument,
                       "kolo: unsupported TensorFlow dtype " + std::to_string(tf_dtype())));
    }
    return kolo::Tensor{data(), *dtype, dims(), kCpuDevice};
  }

 private:
  const Api& api_;
  Tensor* tensor_;
};

ScopedTensor input(const Api& api, OpKernelContext* ctx, int index) {
  ScopedStatus status(api);
  Tensor* tensor = nullptr;
  api.GetInput(ctx, index, &tensor, status.get());
  status.check("reading an input");
  return ScopedTensor(api, tensor);
}

ScopedTensor allocate(const Api& api, OpKernelContext* ctx, int index, int tf_dtype,
                      const std::vector<int64_t>& dims, size_t bytes) {
  ScopedStatus status(api);
  Tensor* tensor = api.AllocateOutput(ctx, index, tf_dtype, dims.data(),
                                      static_cast<int>(dims.size()), bytes, status.get());
  status.check("allocating an output");
  return ScopedTensor(api, tensor);
}

// An output whose contents the engine allocated (allgather, alltoall,
// reducescatter): copied into a TensorFlow tensor once, after completion.
void copy_out(const Api& api, OpKernelContext* ctx, int index, int tf_dtype, const Handle& handle) {
  ScopedTensor out = allocate(api, ctx, index, tf_dtype, handle.shape(), handle.nbytes());
  if (handle.nbytes() > 0) std::memcpy(out.data(), handle.data(), handle.nbytes());
}

// Whatever ends an operation after the engine accepted it (a mismatch found
// in negotiation, a lost peer, shutdown) fails the job's step, as
// kolo._core's raise_if_error treats it: reported as aborted.
void wait_ok(const Handle& handle) {
  kolo::Status status = handle.wait();
  if (!status.ok()) throw Exception(kolo::Status(StatusCode::kAborted, status.message()));
}

// wait_ok for every member of a group. Every member is waited for before
// any error leaves: a mismatch can fail some members while others still
// complete into memory the kernel owns (its inputs, its outputs), which must
// outlive them (seen as a later abort when a Keras step mismatched).
void wait_all_ok(const std::vector<Handle>& handles) {
  kolo::Status first_error;
  for (const Handle& handle : handles) {
    kolo::Status status = handle.wait();
    if (!status.ok() && first_error.ok()) first_error = std::move(status);
  }
  if (!first_error.ok()) throw Exception(kolo::Status(StatusCode::kAborted, first_error.message()));
}

// Kolo's failures as TensorFlow errors: bad arguments stay
// InvalidArgumentError; failures of the job become AbortedError, which
// kolo.tensorflow turns into KoloInternalError (HorovodInternalError).
void fail(const Api& api, OpKernelContext* ctx, const Exception& error) {
  ScopedStatus status(api);
  const int code = error.code() == StatusCode::kInvalidArgument ? kInvalidArgument : kAborted;
  api.SetStatus(status.get(), code, error.status().message().c_str());
  api.OpKernelContext_Failure(ctx, status.get());
}

// The attributes of one op node, read once when TensorFlow builds the kernel.
struct Config {
  ReduceOptions reduce{};
  int32_t process_set = 0;
  int root = 0;
  std::string name;
};

int64_t int_attr(const Api& api, OpKernelConstruction* ctx, const char* name, Status* status) {
  int64_t value = 0;
  api.OpKernelConstruction_GetAttrInt64(ctx, name, &value, status);
  return value;
}

void* create_kernel(OpKernelConstruction* ctx, bool reduces, bool has_root) {
  const Api& api = Bridge::get().api();
  ScopedStatus status(api);
  auto config = std::make_unique<Config>();
  config->process_set = static_cast<int32_t>(int_attr(api, ctx, "process_set", status.get()));
  if (status.ok() && reduces) {
    config->reduce.op = static_cast<ReduceOp>(int_attr(api, ctx, "reduce_op", status.get()));
    float scale = 1.0F;
    if (status.ok()) api.OpKernelConstruction_GetAttrFloat(ctx, "prescale", &scale, status.get());
    config->reduce.prescale = scale;
    if (status.ok()) api.OpKernelConstruction_GetAttrFloat(ctx, "postscale", &scale, status.get());
    config->reduce.postscale = scale;
  }
  if (status.ok() && has_root) {
    config->root = static_cast<int>(int_attr(api, ctx, "root_rank", status.get()));
  }
  int32_t list_size = 0;
  int32_t length = 0;
  if (status.ok()) {
    api.OpKernelConstruction_GetAttrSize(ctx, "tensor_name", &list_size, &length, status.get());
  }
  if (status.ok() && length > 0) {
    config->name.resize(static_cast<size_t>(length));
    api.OpKernelConstruction_GetAttrString(ctx, "tensor_name", config->name.data(),
                                           config->name.size(), status.get());
  }
  if (!status.ok()) {
    api.OpKernelConstruction_Failure(ctx, status.get());
    return nullptr;
  }
  config->reduce.name = config->name;
  config->reduce.process_set = config->process_set;
  return config.release();
}

void* create_reducing(OpKernelConstruction* ctx) {
  return create_kernel(ctx, true, false);
}
void* create_plain(OpKernelConstruction* ctx) {
  return create_kernel(ctx, false, false);
}
void* create_rooted(OpKernelConstruction* ctx) {
  return create_kernel(ctx, false, true);
}
void delete_config(void* config) {
  delete static_cast<Config*>(config);
}

// Runs `body`, turning any Kolo failure into the op's error.
template <typename Body>
void guarded(OpKernelContext* ctx, Body&& body) {
  const Api& api = Bridge::get().api();
  try {
    body(api);
  } catch (const Exception& error) {
    fail(api, ctx, error);
  } catch (const std::exception& error) {
    fail(api, ctx, Exception(kolo::Status(StatusCode::kInternal, error.what())));
  }
}

void compute_allreduce(void* state, OpKernelContext* ctx) {
  const Config& config = *static_cast<Config*>(state);
  guarded(ctx, [&](const Api& api) {
    ScopedTensor in = input(api, ctx, 0);
    ScopedTensor out = allocate(api, ctx, 0, in.tf_dtype(), in.dims(), in.bytes());
    const kolo::Tensor view = in.view();
    wait_ok(Bridge::get().submit(
        [&](Engine& engine) { return engine.allreduce(view, out.data(), config.reduce); }));
  });
}

void compute_grouped_allreduce(void* state, OpKernelContext* ctx) {
  const Config& config = *static_cast<Config*>(state);
  guarded(ctx, [&](const Api& api) {
    const int count = api.NumInputs(ctx);
    std::vector<ScopedTensor> ins;
    std::vector<ScopedTensor> outs;
    std::vector<kolo::Tensor> views;
    std::vector<void*> out_data;
    for (int i = 0; i < count; ++i) {
      ins.push_back(input(api, ctx, i));
      outs.push_back(
          allocate(api, ctx, i, ins.back().tf_dtype(), ins.back().dims(), ins.back().bytes()));
      views.push_back(ins.back().view());
      out_data.push_back(outs.back().data());
    }
    const std::vector<Handle> handles = Bridge::get().submit_group(
        [&](Engine& engine) { return engine.grouped_allreduce(views, out_data, config.reduce); });
    wait_all_ok(handles);
  });
}

// The grouped ops whose results the engine allocates (allgather,
// reducescatter): every input submitted as one group (one negotiation), the
// results copied out once every member completed. `enqueue(engine, views)`
// submits the group.
template <typename Enqueue>
void compute_group_copied_out(OpKernelContext* ctx, Enqueue&& enqueue) {
  guarded(ctx, [&](const Api& api) {
    const int count = api.NumInputs(ctx);
    std::vector<ScopedTensor> ins;
    std::vector<kolo::Tensor> views;
    for (int i = 0; i < count; ++i) {
      ins.push_back(input(api, ctx, i));
      views.push_back(ins.back().view());
    }
    const std::vector<Handle> handles =
        Bridge::get().submit_group([&](Engine& engine) { return enqueue(engine, views); });
    wait_all_ok(handles);
    for (int i = 0; i < count; ++i) {
      copy_out(api, ctx, i, ins[static_cast<size_t>(i)].tf_dtype(),
               handles[static_cast<size_t>(i)]);
    }
  });
}

void compute_grouped_allgather(void* state, OpKernelContext* ctx) {
  const Config& config = *static_cast<Config*>(state);
  compute_group_copied_out(ctx, [&](Engine& engine, const std::vector<kolo::Tensor>& views) {
    return engine.grouped_allgather(views, {config.name, config.process_set});
  });
}

void compute_grouped_reducescatter(void* state, OpKernelContext* ctx) {
  const Config& config = *static_cast<Config*>(state);
  compute_group_copied_out(ctx, [&](Engine& engine, const std::vector<kolo::Tensor>& views) {
    return engine.grouped_reducescatter(views, config.reduce);
  });
}

void compute_allgather(void* state, OpKernelContext* ctx) {
  const Config& config = *static_cast<Config*>(state);
  guarded(ctx, [&](const Api& api) {
    ScopedTensor in = input(api, ctx, 0);
    const kolo::Tensor view = in.view();
    const Handle handle = Bridge::get().submit([&](Engine& engine) {
      return engine.allgather(view, {config.name, config.process_set});
    });
    wait_ok(handle);
    copy_out(api, ctx, 0, in.tf_dtype(), handle);
  });
}

void compute_broadcast(void* state, OpKernelContext* ctx) {
  const Config& config = *static_cast<Config*>(state);
  guarded(ctx, [&](const Api& api) {
    ScopedTensor in = input(api, ctx, 0);
    ScopedTensor out = allocate(api, ctx, 0, in.tf_dtype(), in.dims(), in.bytes());
    const kolo::Tensor view = in.view();
    wait_ok(Bridge::get().submit([&](Engine& engine) {
      return engine.broadcast(view, out.data(), {config.root, config.name, config.process_set});
    }));
  });
}

void compute_alltoall(void* state, OpKernelContext* ctx) {
  const Config& config = *static_cast<Config*>(state);
  guarded(ctx, [&](const Api& api) {
    ScopedTensor in = input(api, ctx, 0);
    ScopedTensor splits_in = input(api, ctx, 1);
    const auto* split_data = static_cast<const int64_t*>(splits_in.data());
    std::vector<int64_t> splits(split_data, split_data + splits_in.bytes() / sizeof(int64_t));
    const kolo::Tensor view = in.view();
    const Handle handle = Bridge::get().submit([&](Engine& engine) {
      return engine.alltoall(view, {std::move(splits), config.name, config.process_set});
    });
    wait_ok(handle);
    copy_out(api, ctx, 0, in.tf_dtype(), handle);
    const std::vector<int64_t>& received = handle.received_splits();
    ScopedTensor out = allocate(api, ctx, 1, kInt64, {static_cast<int64_t>(received.size())},
                                received.size() * sizeof(int64_t));
    if (!received.empty()) {
      std::memcpy(out.data(), received.data(), received.size() * sizeof(int64_t));
    }
  });
}

void compute_reducescatter(void* state, OpKernelContext* ctx) {
  const Config& config = *static_cast<Config*>(state);
  guarded(ctx, [&](const Api& api) {
    ScopedTensor in = input(api, ctx, 0);
    const kolo::Tensor view = in.view();
    const Handle handle = Bridge::get().submit(
        [&](Engine& engine) { return engine.reducescatter(view, config.reduce); });
    wait_ok(handle);
    copy_out(api, ctx, 0, in.tf_dtype(), handle);
  });
}

// Shape functions: outputs shaped as inputs, or unknown until run (the
// Python wrappers then set what they know, e.g. allgather's trailing dims).
void same_shapes(ShapeInferenceContext* ctx, Status* status) {
  const Api& api = Bridge::get().api();
  const int64_t count = api.ShapeInferenceContextNumInputs(ctx);
  for (int64_t i = 0; i < count; ++i) {
    ShapeHandle* shape = api.NewShapeHandle();
    api.ShapeInferenceContextGetInput(ctx, static_cast<int>(i), shape, status);
    if (api.GetCode(status) == kOk) {
      api.ShapeInferenceContextSetOutput(ctx, static_cast<int>(i), shape, status);
    }
    api.DeleteShapeHandle(shape);
    if (api.GetCode(status) != kOk) return;
  }
}

void unknown_shapes(ShapeInferenceContext* ctx, Status* status) {
  Bridge::get().api().ShapeInferenceContextSetUnknownShape(ctx, status);
}

struct OpSpec {
  const char* name;
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  std::vector<std::string> attrs;
  void (*shape)(ShapeInferenceContext*, Status*);
  void* (*create)(OpKernelConstruction*);
  void (*compute)(void*, OpKernelContext*);
};

std::vector<OpSpec> op_specs() {
  const std::string type = std::string("T: ") + kTypes;
  const std::string type_list = std::string("T: list(") + kTypes + ") >= 1";
  const std::vector<std::string> reduce_attrs = {"reduce_op: int", "prescale: float",
                                                 "postscale: float"};
  auto with = [](std::vector<std::string> attrs, const std::vector<std::string>& more) {
    attrs.insert(attrs.end(), more.begin(), more.end());
    attrs.push_back("process_set: int");
    attrs.push_back("tensor_name: string");
    return attrs;
  };
  return {
      {"KoloAllreduce",
       {"tensor: T"},
       {"output: T"},
       with({type}, reduce_attrs),
       same_shapes,
       create_reducing,
       compute_allreduce},
      {"KoloGroupedAllreduce",
       {"tensors: T"},
       {"outputs: T"},
       with({type_list}, reduce_attrs),
       same_shapes,
       create_reducing,
       compute_grouped_allreduce},
      {"KoloAllgather",
       {"tensor: T"},
       {"output: T"},
       with({type}, {}),
       unknown_shapes,
       create_plain,
       compute_allgather},
      {"KoloGroupedAllgather",
       {"tensors: T"},
       {"outputs: T"},
       with({type_list}, {}),
       unknown_shapes,
       create_plain,
       compute_grouped_allgather},
      {"KoloBroadcast",
       {"tensor: T"},
       {"output: T"},
       with({type}, {"root_rank: int"}),
       same_shapes,
       create_rooted,
       compute_broadcast},
      {"KoloAlltoall",
       {"tensor: T", "splits: int64"},
       {"output: T", "received_splits: int64"},
       with({type}, {}),
       unknown_shapes,
       create_plain,
       compute_alltoall},
      {"KoloReducescatter",
       {"tensor: T"},
       {"output: T"},
       with({type}, reduce_attrs),
       unknown_shapes,
       create_reducing,
       compute_reducescatter},
      {"KoloGroupedReducescatter",
       {"tensors: T"},
       {"outputs: T"},
       with({type_list}, reduce_attrs),
       unknown_shapes,
       create_reducing,
       compute_grouped_reducescatter},
  };
}

}  // namespace

std::string register_kolo_ops(const Api& api) {
  ScopedStatus status(api);
  for (const OpSpec& spec : op_specs()) {
    OpDefinitionBuilder* op = api.NewOpDefinitionBuilder(spec.name);
    for (const auto& in : spec.inputs) api.OpDefinitionBuilderAddInput(op, in.c_str());
    for (const auto& out : spec.outputs) api.OpDefinitionBuilderAddOutput(op, out.c_str());
    for (const auto& attr : spec.attrs) api.OpDefinitionBuilderAddAttr(op, attr.c_str());
    // Stateful: never folded, deduplicated or pruned, and ordered by
    // tf.function's automatic control dependencies.
    api.OpDefinitionBuilderSetIsStateful(op, true);
    api.OpDefinitionBuilderSetShapeInferenceFunction(op, spec.shape);
    api.RegisterOpDefinition(op, status.get());  // takes ownership of `op`
    if (!status.ok())
      return std::string("registering ") + spec.name + ": " + api.Message(status.get());
    KernelBuilder* kernel =
        api.NewKernelBuilder(spec.name, "CPU", spec.create, spec.compute, delete_config);
    api.RegisterKernelBuilder(spec.name, kernel, status.get());  // takes ownership
    if (!status.ok()) {
      return std::string("registering the kernel of ") + spec.name + ": " +
             api.Message(status.get());
    }
  }
  return "";
}

}  // namespace kolo::python::tf
