// kolo._core's GPU questions (include/kolo/gpu.h): whether CUDA tensors can
// go through this installation, and, for a DLPack tensor on a device, the
// device ordinal the engine is given or the exact reason it cannot be.
#pragma once

#include <dlpack/dlpack.h>
#include <pybind11/pybind11.h>

#include <cstdint>

namespace kolo::python {

void bind_gpu(pybind11::module_& m);

// The engine's device for a DLPack device: kCpuDevice for kDLCPU; the
// ordinal for kDLCUDA when the CUDA plugin saw a device; otherwise raises
// ValueError naming what is missing (not built, does not load, no device)
// or the device type Kolo does not know.
int32_t engine_device(const DLDevice& device);

}  // namespace kolo::python
