#include "gpu_binding.h"

#include <string>

#include "kolo/gpu.h"
#include "kolo/types.h"

namespace py = pybind11;

namespace kolo::python {

int32_t engine_device(const DLDevice& device) {
  if (device.device_type == kDLCPU) return kCpuDevice;
  if (device.device_type != kDLCUDA) {
    throw py::value_error("kolo: tensors on DLPack device type " +
                          std::to_string(device.device_type) +
                          " are not supported; move the tensor to the CPU or a CUDA device");
  }
  const GpuStatus status = gpu_status();
  if (status.state != "ready") {
    throw py::value_error("kolo: cannot take a tensor on cuda:" + std::to_string(device.device_id) +
                          ": " + status.why_not + "; move the tensor to the CPU first");
  }
  return device.device_id;
}

void bind_gpu(py::module_& m) {
  m.def(
      "gpu_status",
      [] {
        GpuStatus status = gpu_status();
        py::dict answer;
        answer["state"] = status.state;
        answer["why_not"] = status.why_not;
        answer["devices"] = status.devices;
        answer["runtime"] = status.runtime;
        return answer;
      },
      "{'state': 'not built' | 'does not load' | 'no device' | 'ready', 'why_not', "
      "'devices', 'runtime'}: whether CUDA tensors can go through this installation");
}

}  // namespace kolo::python
