// What this installation can do with CUDA tensors. Kolo's GPU support is a
// plugin (libkolo_cuda.so) loaded at run time, so the answer depends on the
// machine, not the build alone: a plugin that was not built, that does not
// load, or that sees no device is "no", with the reason.
#pragma once

#include <string>

namespace kolo {

struct GpuStatus {
  // "not built", "does not load", "no device" or "ready".
  std::string state;
  // One line naming what is missing; empty when ready.
  std::string why_not;
  int devices = 0;
  // The CUDA runtime and driver versions when the plugin loaded, else empty.
  std::string runtime;
};

// Loads the CUDA plugin if it is not loaded yet, and asks it for devices.
GpuStatus gpu_status();

}  // namespace kolo
