// A plugin "from another build": it exports both entry points but refuses
// every ABI version, as a real plugin does for a version not its own.
#include <cstdint>

extern "C" __attribute__((visibility("default"))) void* kolo_cuda_plugin(uint32_t) {
  return nullptr;
}
extern "C" __attribute__((visibility("default"))) void* kolo_nccl_plugin(uint32_t) {
  return nullptr;
}
