#include "common/plugin_library.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <filesystem>
#include <vector>

namespace kolo {
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

std::vector<std::filesystem::path> candidates(const PluginRequest& request) {
  if (!request.directory.empty()) {
    return {std::filesystem::path(request.directory) / request.file_name};
  }
  const std::filesystem::path here = own_directory();
  return {here / request.file_name, here.parent_path() / "lib" / request.file_name};
}

void add_reason(std::string& reasons, const std::string& reason) {
  reasons += fmt::format("{}{}", reasons.empty() ? "" : "; ", reason);
}

}  // namespace

bool load_plugin(const PluginRequest& request, const PluginAccept& accept, std::string* why_not) {
  std::string reasons;
  for (const std::filesystem::path& path : candidates(request)) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) {
      add_reason(reasons, path.string() + " does not exist");
      continue;
    }
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_NODELETE | request.extra_dlopen_flags);
    if (handle == nullptr) {
      const char* error = dlerror();
      add_reason(reasons, error != nullptr ? error : path.string() + " did not load");
      continue;
    }
    const std::string entry_name(request.entry_point);
    void* entry = dlsym(handle, entry_name.c_str());
    if (entry == nullptr) {
      add_reason(reasons, fmt::format("{} has no {}", path.string(), entry_name));
      continue;
    }
    std::string refused;
    if (accept(entry, &refused)) return true;
    add_reason(reasons, fmt::format("{} {}", path.string(), refused));
  }
  if (why_not != nullptr) *why_not = reasons;
  return false;
}

}  // namespace kolo
