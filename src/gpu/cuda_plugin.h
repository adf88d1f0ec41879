// The ABI between Kolo and its CUDA plugin, libkolo_cuda.so: one C entry
// point, kolo_cuda_plugin(version), returning the plugin's DeviceRuntime.
// As for the MPI plugin (backends/mpi/mpi_plugin.h), both sides come from the
// same tree and compiler, so the interface is a C++ class and the version
// refuses a plugin of another build. Bump kCudaPluginAbiVersion whenever
// this file or device_runtime.h changes.
#pragma once

#include <cstdint>

#include "gpu/device_runtime.h"

namespace kolo::gpu {

inline constexpr uint32_t kCudaPluginAbiVersion = 1;
inline constexpr const char* kCudaPluginEntryPoint = "kolo_cuda_plugin";
inline constexpr const char* kCudaPluginFileName = "libkolo_cuda.so";

}  // namespace kolo::gpu

// The plugin's object (lives as long as the process), or nullptr when
// `abi_version` is not the one it was built with.
extern "C" kolo::gpu::DeviceRuntime* kolo_cuda_plugin(uint32_t abi_version);
using KoloCudaPluginEntry = kolo::gpu::DeviceRuntime* (*)(uint32_t);
