#include "gpu/host_staging.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "common/check.h"
#include "common/error.h"

namespace kolo::gpu {

HostStagingPipeline::HostStagingPipeline(DeviceRuntime& runtime, int device, StreamHandle stream,
                                         StagingOptions options)
    : runtime_(runtime), stream_(stream), options_(options) {
  KOLO_CHECK(options_.chunk_bytes > 0);
  for (int i = 0; i < 2; ++i) {
    host_[i] = runtime_.allocate_pinned(options_.chunk_bytes);
    copied_down_[i] = runtime_.create_event(device);
  }
  drained_ = runtime_.create_event(device);
}

HostStagingPipeline::~HostStagingPipeline() {
  for (int i = 0; i < 2; ++i) {
    runtime_.free_pinned(host_[i]);
    runtime_.destroy_event(copied_down_[i]);
  }
  runtime_.destroy_event(drained_);
}

size_t HostStagingPipeline::chunk_bytes(size_t element_size) const {
  KOLO_CHECK(element_size > 0 && element_size <= options_.chunk_bytes);
  return options_.chunk_bytes / element_size * element_size;
}

void HostStagingPipeline::wait(EventHandle event, const char* what) {
  const auto deadline = std::chrono::steady_clock::now() + options_.copy_timeout;
  while (!runtime_.event_done(event)) {
    if (std::chrono::steady_clock::now() >= deadline) {
      throw TimeoutError(fmt::format("host-staged collective: {} not done after {} ms", what,
                                     options_.copy_timeout.count()));
    }
    std::this_thread::yield();
  }
}

void HostStagingPipeline::run(void* device_buffer, size_t bytes, size_t element_size,
                              const ChunkCollective& collective) {
  KOLO_CHECK(bytes % element_size == 0);
  const size_t chunk = chunk_bytes(element_size);
  const size_t chunks = (bytes + chunk - 1) / chunk;
  char* device = static_cast<char*>(device_buffer);
  auto size_of = [&](size_t k) { return std::min(chunk, bytes - k * chunk); };
  auto copy_down = [&](size_t k) {
    runtime_.copy_async(host_[k % 2], device + k * chunk, size_of(k), CopyKind::kDeviceToHost,
                        stream_);
    runtime_.record_event(copied_down_[k % 2], stream_);
  };
  // Whatever happens, the copies in flight finish before this returns: the
  // pinned buffers must not be reused (or freed) under them.
  auto drain = [&] {
    runtime_.record_event(drained_, stream_);
    wait(drained_, "draining the copies");
  };
  if (chunks == 0) return;
  copy_down(0);
  try {
    for (size_t k = 0; k < chunks; ++k) {
      // Queued after chunk k-1's copy back, which read the same buffer.
      if (k + 1 < chunks) copy_down(k + 1);
      wait(copied_down_[k % 2], "a chunk's copy to the host");
      collective(host_[k % 2], k * chunk, size_of(k));
      runtime_.copy_async(device + k * chunk, host_[k % 2], size_of(k), CopyKind::kHostToDevice,
                          stream_);
    }
  } catch (...) {
    drain();
    throw;
  }
  drain();
}

}  // namespace kolo::gpu
