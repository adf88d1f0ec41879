// include/kolo/gpu.h over the GPU layer's plugin loader.
#include "gpu/cuda_plugin_loader.h"
#include "kolo/gpu.h"

namespace kolo {

GpuStatus gpu_status() {
  const gpu::GpuSupport support = gpu::gpu_support();
  GpuStatus status;
  status.state = std::string(gpu::gpu_state_name(support.state));
  status.why_not = support.why_not;
  status.devices = support.devices;
  if (support.runtime != nullptr) status.runtime = support.runtime->describe();
  return status;
}

}  // namespace kolo
