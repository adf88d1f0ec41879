#include "runner/check_build.h"

#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <cstdlib>

#include "runner/build_probes.h"
#include "runner/process.h"

#ifndef KOLO_VERSION_STRING
#define KOLO_VERSION_STRING "unknown"
#endif

namespace kolo::runner {
namespace {

// Importing torch takes a few seconds on a cold cache; more means something is wrong.
constexpr std::chrono::seconds kPythonProbeLimit{30};

struct Entry {
  std::string label;
  bool present;
  std::string note;  // why, or where; empty: nothing to add
};

void section(std::string& out, const char* title, const std::vector<Entry>& entries) {
  out += fmt::format("\n{}:\n", title);
  for (const auto& e : entries)
    out += fmt::format("    [{}] {}{}\n", e.present ? "X" : " ", e.label,
                       e.note.empty() ? "" : " (" + e.note + ")");
}

std::string self_path() {
  char path[PATH_MAX] = {};
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<size_t>(n)) : std::string();
}

// A framework works through Kolo when both it and the kolo package import.
Entry framework(const PythonModules& python, const std::string& label, const std::string& module) {
  if (!python.error.empty()) return {label, false, python.error};
  if (!python.imports(module))
    return {label, false,
            fmt::format("{} does not import {}: {}", python.interpreter, module,
                        python.failed.count(module) ? python.failed.at(module) : "")};
  if (!python.imports("kolo"))
    return {label, false,
            fmt::format("{} imports {} but not kolo: {}", python.interpreter, module,
                        python.failed.count("kolo") ? python.failed.at("kolo") : "")};
  return {label, true, ""};
}

Entry plugin(const std::string& self, const std::string& label, const std::string& name) {
  const PluginProbe p = probe_plugin(self, name);
  switch (p.state) {
    case PluginProbe::State::kLoads:
      return {label, true, p.path};
    case PluginProbe::State::kBroken:
      return {label, false, fmt::format("{} does not load: {}", p.path, p.error)};
    case PluginProbe::State::kNotBuilt:
      break;
  }
  return {label, false, fmt::format("not built: no libkolo_{}.so", name)};
}

Entry program(const std::string& label, const std::string& name, const std::string& path) {
  const auto found = find_program(name, path);
  return {label, found.has_value(), found ? *found : name + " not in PATH"};
}

// The NCCL plugin may be built and load (issue 24's foundation) while the
// engine does not run collectives on CUDA tensors yet: horovodrun's [X]
// would promise GPU allreduces that fail, so it stays unchecked with why.
Entry nccl(const std::string& self) {
  Entry entry = plugin(self, "NCCL", "nccl");
  if (entry.present) {
    entry.present = false;
    entry.note += "; loads, but Kolo's engine does not run NCCL collectives yet";
  }
  return entry;
}

}  // namespace

std::string check_build_report() {
  const char* path_variable = std::getenv("PATH");
  const std::string path = path_variable ? path_variable : "/usr/bin:/bin";
  const std::string self = self_path();

  PythonModules python;
  if (const auto interpreter = find_python(self, path)) {
    python = probe_python_modules(*interpreter, {"kolo", "torch", "numpy", "tensorflow"},
                                  kPythonProbeLimit);
  } else {
    python.error = "no python3 beside kolorun or in PATH";
  }
  std::string out = fmt::format("Kolo v{}:\n", KOLO_VERSION_STRING);
  if (python.error.empty())
    out += fmt::format("(Python frameworks as {} sees them)\n", python.interpreter);

  Entry tensorflow{"TensorFlow", false, "Kolo has no TensorFlow binding"};
  if (python.imports("tensorflow")) tensorflow.note += "; tensorflow itself imports";
  section(out, "Available Frameworks",
          {{"C++ (kolo.h)", true, ""},
           framework(python, "PyTorch", "torch"),
           framework(python, "NumPy", "numpy"),
           tensorflow});

  const std::string shm = shared_memory_problem();
  const Entry gloo{"Gloo", true, "Kolo's own TCP store and transport take its place"};
  section(out, "Available Controllers",
          {{"Kolo (TCP rendezvous store)", true, ""}, gloo, plugin(self, "MPI", "mpi")});
  section(out, "Available Tensor Operations",
          {{"TCP", true, ""},
           {"Shared memory", shm.empty(), shm},
           gloo,
           plugin(self, "MPI", "mpi"),
           nccl(self)});
  section(out, "Launcher",
          {{"local fork/exec", true, ""},
           program("remote hosts over ssh", "ssh", path),
           program("mpirun", "mpirun", path),
           program("jsrun", "jsrun", path),
           {"elastic (--min-np/--max-np/--host-discovery-script)", true, "built into kolorun"}});
  return out;
}

}  // namespace kolo::runner
