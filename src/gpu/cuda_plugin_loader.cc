#include "gpu/cuda_plugin_loader.h"

#include <fmt/format.h>

#include "common/plugin_library.h"
#include "gpu/cuda_plugin.h"

namespace kolo::gpu {

GpuSupport load_cuda_plugin(std::string_view directory, bool built) {
  GpuSupport support;
  if (!built) {
    support.state = GpuState::kNotBuilt;
    support.why_not =
        "this Kolo was built without GPU support (no CUDA toolkit was found when it was "
        "built: rebuild with the CUDA toolkit installed, or -DKOLO_WITH_CUDA=ON to require it)";
    return support;
  }
  std::string why_not;
  const PluginRequest request{kCudaPluginFileName, kCudaPluginEntryPoint, directory, 0};
  DeviceRuntime* runtime =
      load_plugin_object<DeviceRuntime>(request, kCudaPluginAbiVersion, &why_not);
  if (runtime == nullptr) {
    support.state = GpuState::kDoesNotLoad;
    support.why_not =
        fmt::format("Kolo's CUDA plugin ({}) does not load: {}", kCudaPluginFileName, why_not);
    return support;
  }
  support.runtime = runtime;
  const DeviceCount count = runtime->device_count();
  support.devices = count.count;
  if (count.count <= 0) {
    support.state = GpuState::kNoDevice;
    support.why_not = fmt::format("no CUDA device: {}", count.why_none);
    return support;
  }
  support.state = GpuState::kReady;
  return support;
}

GpuSupport gpu_support() {
#if KOLO_HAVE_CUDA
  return load_cuda_plugin({}, true);
#else
  return load_cuda_plugin({}, false);
#endif
}

std::string_view gpu_state_name(GpuState state) {
  switch (state) {
    case GpuState::kNotBuilt:
      return "not built";
    case GpuState::kDoesNotLoad:
      return "does not load";
    case GpuState::kNoDevice:
      return "no device";
    case GpuState::kReady:
      return "ready";
  }
  return "unknown";
}

}  // namespace kolo::gpu
