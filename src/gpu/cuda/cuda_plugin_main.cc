// libkolo_cuda.so: DeviceRuntime over the CUDA runtime API. The only code of
// Kolo that includes CUDA's headers or links libcudart (statically, so the
// plugin needs nothing but the driver, libcuda.so, at run time: a machine
// without the driver gets cudaErrorInsufficientDriver from the first call,
// which device_count() reports as the reason). Built only when CMake finds
// the CUDA toolkit (cmake/KoloCuda.cmake).
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <string>

#include "common/error.h"
#include "gpu/cuda_plugin.h"

namespace kolo::gpu {
namespace {

std::string error_text(cudaError_t error) {
  return fmt::format("{} ({})", cudaGetErrorName(error), cudaGetErrorString(error));
}

void check(cudaError_t error, const char* call) {
  if (error != cudaSuccess) throw IoError(fmt::format("{}: {}", call, error_text(error)));
}

#define KOLO_CUDA_CHECK(call) check((call), #call)

// A stream, event or allocation made by `create` with `device` current (CUDA's
// current device is per thread, and the engine's threads change it).
template <typename Handle, typename Create>
Handle make_on(int device, const char* call, Create create) {
  KOLO_CUDA_CHECK(cudaSetDevice(device));
  Handle handle = nullptr;
  check(create(&handle), call);
  return handle;
}

class CudaRuntime final : public DeviceRuntime {
 public:
  DeviceCount device_count() override {
    int count = 0;
    const cudaError_t error = cudaGetDeviceCount(&count);
    if (error != cudaSuccess) {
      // Clear the sticky "last error" so later calls do not report it again.
      (void)cudaGetLastError();
      return {0, fmt::format("cudaGetDeviceCount failed: {}", error_text(error))};
    }
    if (count == 0) return {0, "cudaGetDeviceCount found 0 devices"};
    return {count, ""};
  }

  std::string describe() override {
    int runtime = 0;
    int driver = 0;
    (void)cudaRuntimeGetVersion(&runtime);
    (void)cudaDriverGetVersion(&driver);
    return fmt::format("CUDA runtime {}, driver {}", runtime, driver);
  }

  StreamHandle create_stream(int device) override {
    return make_on<cudaStream_t>(device, "cudaStreamCreateWithFlags", [](cudaStream_t* stream) {
      return cudaStreamCreateWithFlags(stream, cudaStreamNonBlocking);
    });
  }
  void destroy_stream(StreamHandle stream) override {
    KOLO_CUDA_CHECK(cudaStreamDestroy(static_cast<cudaStream_t>(stream)));
  }
  void synchronize_stream(StreamHandle stream) override {
    KOLO_CUDA_CHECK(cudaStreamSynchronize(static_cast<cudaStream_t>(stream)));
  }

  EventHandle create_event(int device) override {
    return make_on<cudaEvent_t>(device, "cudaEventCreateWithFlags", [](cudaEvent_t* event) {
      return cudaEventCreateWithFlags(event, cudaEventDisableTiming);
    });
  }
  void destroy_event(EventHandle event) override {
    KOLO_CUDA_CHECK(cudaEventDestroy(static_cast<cudaEvent_t>(event)));
  }
  void record_event(EventHandle event, StreamHandle stream) override {
    KOLO_CUDA_CHECK(
        cudaEventRecord(static_cast<cudaEvent_t>(event), static_cast<cudaStream_t>(stream)));
  }
  void stream_wait_event(StreamHandle stream, EventHandle event) override {
    KOLO_CUDA_CHECK(
        cudaStreamWaitEvent(static_cast<cudaStream_t>(stream), static_cast<cudaEvent_t>(event), 0));
  }
  bool event_done(EventHandle event) override {
    const cudaError_t state = cudaEventQuery(static_cast<cudaEvent_t>(event));
    if (state == cudaErrorNotReady) return false;
    KOLO_CUDA_CHECK(state);
    return true;
  }

  void* allocate_device(int device, size_t bytes) override {
    return make_on<void*>(device, "cudaMalloc",
                          [bytes](void** memory) { return cudaMalloc(memory, bytes); });
  }
  void free_device(void* memory) override { KOLO_CUDA_CHECK(cudaFree(memory)); }
  void* allocate_pinned(size_t bytes) override {
    void* memory = nullptr;
    KOLO_CUDA_CHECK(cudaHostAlloc(&memory, bytes, cudaHostAllocPortable));
    return memory;
  }
  void free_pinned(void* memory) override { KOLO_CUDA_CHECK(cudaFreeHost(memory)); }

  void copy_async(void* destination, const void* source, size_t bytes, CopyKind kind,
                  StreamHandle stream) override {
    KOLO_CUDA_CHECK(cudaMemcpyAsync(destination, source, bytes, to_cuda(kind),
                                    static_cast<cudaStream_t>(stream)));
  }

 private:
  static cudaMemcpyKind to_cuda(CopyKind kind) {
    switch (kind) {
      case CopyKind::kHostToDevice:
        return cudaMemcpyHostToDevice;
      case CopyKind::kDeviceToHost:
        return cudaMemcpyDeviceToHost;
      case CopyKind::kDeviceToDevice:
        return cudaMemcpyDeviceToDevice;
    }
    return cudaMemcpyDefault;
  }
};

}  // namespace
}  // namespace kolo::gpu

extern "C" __attribute__((visibility("default"))) kolo::gpu::DeviceRuntime* kolo_cuda_plugin(
    uint32_t abi_version) {
  if (abi_version != kolo::gpu::kCudaPluginAbiVersion) return nullptr;
  static kolo::gpu::CudaRuntime runtime;
  return &runtime;
}
