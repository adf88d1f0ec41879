// What Kolo needs from the CUDA runtime, as an interface: libkolo never links
// libcudart; the CUDA plugin (libkolo_cuda.so, gpu/cuda/) implements this and
// is loaded on first use of a CUDA tensor (gpu/cuda_plugin_loader.h).
//
// Streams and events are opaque handles (cudaStream_t / cudaEvent_t inside
// the plugin). A stream handle may also be one the framework owns (torch's
// current stream, passed through DLPack's stream argument): the runtime never
// destroys a handle it did not create.
//
// Threading: every method may be called from any thread; the calls that
// take a device make it current on the calling thread first (CUDA's current
// device is per thread). Failures throw IoError naming the CUDA call and
// CUDA's error name and text ("cudaMemcpyAsync: cudaErrorIllegalAddress (an
// illegal memory access was encountered)"); device_count() never throws.
#pragma once

#include <cstddef>
#include <string>

namespace kolo::gpu {

using StreamHandle = void*;
using EventHandle = void*;

// How many devices this process can use; zero with the reason when none
// (no driver, no device, CUDA_VISIBLE_DEVICES empty).
struct DeviceCount {
  int count = 0;
  std::string why_none;
};

enum class CopyKind : int { kHostToDevice = 0, kDeviceToHost = 1, kDeviceToDevice = 2 };

class DeviceRuntime {
 public:
  virtual ~DeviceRuntime() = default;

  virtual DeviceCount device_count() = 0;
  // "CUDA runtime 13000, driver 13000" (for kolorun --check-build and logs).
  virtual std::string describe() = 0;

  // A stream of the engine's own (non-blocking: it never waits for the
  // legacy default stream, so the framework's work and Kolo's overlap).
  virtual StreamHandle create_stream(int device) = 0;
  virtual void destroy_stream(StreamHandle stream) = 0;
  virtual void synchronize_stream(StreamHandle stream) = 0;

  // Events without timing (cheaper to record and wait on).
  virtual EventHandle create_event(int device) = 0;
  virtual void destroy_event(EventHandle event) = 0;
  // The work queued on `stream` so far completes the event.
  virtual void record_event(EventHandle event, StreamHandle stream) = 0;
  // Later work on `stream` starts after `event` completes; the host does not wait.
  virtual void stream_wait_event(StreamHandle stream, EventHandle event) = 0;
  // Whether the event completed (never blocks).
  virtual bool event_done(EventHandle event) = 0;

  // Device memory of `device` (fusion buffers); pinned host memory (the
  // host-staged path's chunks: only pinned memory copies asynchronously).
  virtual void* allocate_device(int device, size_t bytes) = 0;
  virtual void free_device(void* memory) = 0;
  virtual void* allocate_pinned(size_t bytes) = 0;
  virtual void free_pinned(void* memory) = 0;

  virtual void copy_async(void* destination, const void* source, size_t bytes, CopyKind kind,
                          StreamHandle stream) = 0;
};

}  // namespace kolo::gpu
