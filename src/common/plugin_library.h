// Finding and loading one of Kolo's plugins (libkolo_mpi.so, libkolo_cuda.so,
// libkolo_nccl.so) at run time, so that libkolo never links the system
// library a plugin wraps (libmpi, libcudart, libnccl) and one build runs on
// machines with and without it.
//
// Where it looks: `directory` when given (tests point it at an empty one);
// otherwise the directory of the binary that holds this code (dladdr: the
// folder of kolo/_core*.so in a pip install, build/bin for the C++ build's
// executables) and its sibling lib/ (build/lib, where CMake puts plugins).
// A plugin stays loaded for the life of the process (RTLD_NODELETE): it may
// have initialised a library whose finaliser runs at exit.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace kolo {

struct PluginRequest {
  std::string_view file_name;    // "libkolo_mpi.so"
  std::string_view entry_point;  // the one exported C symbol
  std::string_view directory;    // empty: next to this binary, then ../lib
  // Extra dlopen flags (RTLD_GLOBAL for libraries that dlopen their own parts).
  int extra_dlopen_flags = 0;
};

// Called with the entry point's address of each candidate that loads; returns
// whether that plugin is the one wanted (false with the reason in *why_not,
// e.g. a plugin built for another ABI version), and keeps what it needs.
using PluginAccept = std::function<bool(void* entry_point, std::string* why_not)>;

// Whether a candidate was accepted; otherwise *why_not gets every candidate's
// reason ("... does not exist"; dlerror's text when a library it needs is
// missing; "has no <entry>"; what `accept` said), joined by "; ".
bool load_plugin(const PluginRequest& request, const PluginAccept& accept, std::string* why_not);

// The common case: the entry point is `Object* entry(uint32_t abi_version)`,
// which returns nullptr for a version other than its own. The plugin's
// object, or nullptr with the reasons in *why_not.
template <typename Object>
Object* load_plugin_object(const PluginRequest& request, uint32_t abi_version,
                           std::string* why_not) {
  Object* object = nullptr;
  const bool loaded = load_plugin(
      request,
      [&](void* entry, std::string* refused) {
        object = reinterpret_cast<Object* (*)(uint32_t)>(entry)(abi_version);
        if (object == nullptr) {
          *refused = "was built for another Kolo (plugin ABI version " +
                     std::to_string(abi_version) + " expected)";
        }
        return object != nullptr;
      },
      why_not);
  return loaded ? object : nullptr;
}

}  // namespace kolo
