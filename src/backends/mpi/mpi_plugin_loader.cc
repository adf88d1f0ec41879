#include "backends/mpi/mpi_plugin_loader.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <vector>

namespace kolo::backends {
namespace {

// The folder of the binary (executable or shared object) this function is in.
std::filesystem::path own_directory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<const void*>(&own_directory), &info) == 0 ||
      info.dli_fname == nullptr) {
    return {};
  }
  std::error_code ec;
  std::filesystem::path self = std::filesystem::canonical(info.dli_fname, ec);
  return ec ? std::filesystem::path(info.dli_fname).parent_path() : self.parent_path();
}

std::vector<std::filesystem::path> candidates(std::string_view directory) {
  if (!directory.empty()) return {std::filesystem::path(directory) / kMpiPluginFileName};
  const std::filesystem::path here = own_directory();
  return {here / kMpiPluginFileName, here.parent_path() / "lib" / kMpiPluginFileName};
}

}  // namespace

MpiPlugin* load_mpi_plugin(std::string_view directory, std::string* why_not) {
  std::string reasons;
  for (const std::filesystem::path& path : candidates(directory)) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      reasons += fmt::format("{}{} does not exist", reasons.empty() ? "" : "; ", path.string());
      continue;
    }
    // RTLD_GLOBAL: OpenMPI loads its own components with dlopen and they
    // look for libmpi's symbols in the global scope. The plugin exports only
    // its entry point. RTLD_NODELETE: never unloaded (see the header).
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL | RTLD_NODELETE);
    if (handle == nullptr) {
      const char* error = dlerror();
      reasons += fmt::format("{}{}", reasons.empty() ? "" : "; ",
                             error != nullptr ? error : path.string() + " did not load");
      continue;
    }
    auto entry = reinterpret_cast<KoloMpiPluginEntry>(dlsym(handle, kMpiPluginEntryPoint));
    if (entry == nullptr) {
      reasons += fmt::format("{}{} has no {}", reasons.empty() ? "" : "; ", path.string(),
                             kMpiPluginEntryPoint);
      continue;
    }
    MpiPlugin* plugin = entry(kMpiPluginAbiVersion);
    if (plugin == nullptr) {
      reasons += fmt::format("{}{} was built for another Kolo (plugin ABI version {} expected)",
                             reasons.empty() ? "" : "; ", path.string(), kMpiPluginAbiVersion);
      continue;
    }
    return plugin;
  }
  if (why_not != nullptr) *why_not = reasons;
  return nullptr;
}

}  // namespace kolo::backends
