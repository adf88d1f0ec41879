// Loads the CUDA plugin (libkolo_cuda.so) on first use of a CUDA tensor and
// says precisely why GPU support is missing when it cannot: the plugin was
// not built (no CUDA toolkit when Kolo was built), it does not load (a
// library it needs is missing: dlerror's text), or it loads but the process
// sees no device (no driver, no GPU, CUDA_VISIBLE_DEVICES empty: CUDA's
// own error text).
#pragma once

#include <string>
#include <string_view>

#include "gpu/device_runtime.h"

namespace kolo::gpu {

enum class GpuState {
  kNotBuilt,     // this Kolo was built without the CUDA plugin
  kDoesNotLoad,  // the plugin is built but dlopen or its ABI check failed
  kNoDevice,     // the plugin loaded; the process sees no CUDA device
  kReady,        // at least one device
};

struct GpuSupport {
  GpuState state = GpuState::kNotBuilt;
  DeviceRuntime* runtime = nullptr;  // set unless kNotBuilt / kDoesNotLoad
  int devices = 0;
  // One line a user can act on; empty when kReady.
  std::string why_not;
};

// The plugin from `directory` (empty: next to this binary, then ../lib).
// `built`: whether this build has the plugin (KOLO_HAVE_CUDA for the real
// caller; tests pass true to load from a directory of their own).
GpuSupport load_cuda_plugin(std::string_view directory, bool built);

// This build's answer, from the default place; loads the plugin once per
// call (dlopen returns the loaded library again, so later calls are cheap).
GpuSupport gpu_support();

// The name of a state ("not built", "does not load", "no device", "ready").
std::string_view gpu_state_name(GpuState state);

}  // namespace kolo::gpu
