// What this installation of Kolo can really do, probed at run time for
// kolorun --check-build (check_build.h): which Python frameworks the
// interpreter beside kolorun imports, whether POSIX shared memory works
// here, and whether a backend plugin (libkolo_<name>.so, loaded with dlopen
// by the engine) is there and loads. Each probe answers in words as well,
// so the report can say why something is missing.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace kolo::runner {

// The Python that ranks started from this kolorun most likely use: the
// interpreter of the venv or prefix kolorun is installed in (pip puts it
// at <prefix>/lib/pythonX.Y/site-packages/kolo/bin/kolorun), else one
// beside kolorun, else python3 in `path_variable`. nullopt: none found.
std::optional<std::string> find_python(const std::string& kolorun_path,
                                       const std::string& path_variable);

struct PythonModules {
  std::string interpreter;
  std::string error;                          // the probe itself failed: why; else empty
  std::map<std::string, std::string> failed;  // module -> why it does not import
  std::vector<std::string> imported;
  bool imports(const std::string& module) const;
};

// Runs `interpreter` and tries to import each module, within `limit`
// (importing torch takes seconds; a hung interpreter is killed).
PythonModules probe_python_modules(const std::string& interpreter,
                                   const std::vector<std::string>& modules,
                                   std::chrono::milliseconds limit);

// Creates, sizes, maps, writes and removes a small POSIX shared-memory
// segment. Empty when that works; else what failed.
std::string shared_memory_problem();

struct PluginProbe {
  enum class State { kNotBuilt, kBroken, kLoads } state = State::kNotBuilt;
  std::string path;   // where it was found (kBroken, kLoads)
  std::string error;  // kBroken: dlerror()
};

// libkolo_<name>.so in the places the engine loads plugins from, as seen
// from kolorun at `kolorun_path`: <bin>/../lib (the C++ build tree) and
// <bin>/.. (the pip package, beside kolo/_core).
PluginProbe probe_plugin(const std::string& kolorun_path, const std::string& name);

}  // namespace kolo::runner
