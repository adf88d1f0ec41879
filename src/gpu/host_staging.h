// The host-staged path's pipeline: a CUDA buffer goes through one of Kolo's
// CPU collectives in chunks, each copied device->host into pinned memory,
// reduced (or gathered, broadcast) there in place, and copied back. Used
// where NCCL cannot serve (no NCCL, several ranks on one GPU, a type or op
// NCCL lacks); see docs/architecture.md, "Host-staged path".
//
// Overlap: every copy goes on the one stream the pipeline is given, so
// stream order alone keeps a pinned buffer from being refilled before its
// copy back has read it. With two pinned buffers, chunk k+1's copy down and
// chunk k-1's copy back run on the GPU's copy engine while the host runs
// chunk k's collective. The host waits only for a chunk's copy down (an
// event), and every such wait has a deadline.
//
// Threading: one pipeline per thread (the engine's executor); not shared.
#pragma once

#include <chrono>
#include <cstddef>
#include <functional>

#include "gpu/device_runtime.h"

namespace kolo::gpu {

struct StagingOptions {
  // Bytes per chunk (rounded down to whole elements): large enough that a
  // chunk's collective is not dominated by its fixed costs, small enough
  // that copies and collectives overlap over a whole tensor.
  size_t chunk_bytes = size_t{4} << 20;
  // The longest the host waits for one copy (a stuck GPU, a wrong stream).
  std::chrono::milliseconds copy_timeout{std::chrono::seconds(60)};
};

// The collective on one chunk, in place in pinned host memory: `host` holds
// the `bytes` at `offset` of the staged buffer. Runs on the calling thread;
// an exception ends the pipeline (after its copies drain) and propagates.
using ChunkCollective = std::function<void(void* host, size_t offset, size_t bytes)>;

class HostStagingPipeline {
 public:
  // Allocates two pinned chunks and the events on `device`; copies go on
  // `stream` (the engine's stream of that device).
  HostStagingPipeline(DeviceRuntime& runtime, int device, StreamHandle stream,
                      StagingOptions options);
  ~HostStagingPipeline();
  HostStagingPipeline(const HostStagingPipeline&) = delete;
  HostStagingPipeline& operator=(const HostStagingPipeline&) = delete;

  // Runs `collective` over the `bytes` of `device_buffer` chunk by chunk and
  // returns once every chunk's result is back in device memory. Chunks hold
  // whole elements of `element_size` bytes. Throws TimeoutError when a copy
  // does not finish within copy_timeout, and what the collective throws.
  void run(void* device_buffer, size_t bytes, size_t element_size,
           const ChunkCollective& collective);

  size_t chunk_bytes(size_t element_size) const;

 private:
  void wait(EventHandle event, const char* what);

  DeviceRuntime& runtime_;
  StreamHandle stream_;
  StagingOptions options_;
  void* host_[2] = {nullptr, nullptr};
  EventHandle copied_down_[2] = {nullptr, nullptr};
  EventHandle drained_ = nullptr;
};

}  // namespace kolo::gpu
