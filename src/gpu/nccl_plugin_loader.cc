#include "gpu/nccl_plugin_loader.h"

#include <fmt/format.h>

#include "common/plugin_library.h"

namespace kolo::gpu {

NcclLibrary* load_nccl_plugin(std::string_view directory, bool built, std::string* why_not) {
  if (!built) {
    *why_not =
        "this Kolo was built without NCCL (no NCCL was found next to the CUDA toolkit "
        "when it was built)";
    return nullptr;
  }
  std::string reasons;
  const PluginRequest request{kNcclPluginFileName, kNcclPluginEntryPoint, directory, 0};
  NcclLibrary* library = load_plugin_object<NcclLibrary>(request, kNcclPluginAbiVersion, &reasons);
  if (library == nullptr) {
    *why_not =
        fmt::format("Kolo's NCCL plugin ({}) does not load: {}", kNcclPluginFileName, reasons);
  }
  return library;
}

NcclLibrary* nccl_library(std::string* why_not) {
#if KOLO_HAVE_NCCL
  return load_nccl_plugin({}, true, why_not);
#else
  return load_nccl_plugin({}, false, why_not);
#endif
}

}  // namespace kolo::gpu
