#include "runner/check_build.h"

#include <fmt/format.h>

#include <cstdlib>
#include <string_view>

#include "runner/process.h"

#ifndef KOLO_VERSION_STRING
#define KOLO_VERSION_STRING "unknown"
#endif
// Semicolon-separated features the build configured, e.g. "tcp,cpp".
#ifndef KOLO_BUILD_FEATURES
#define KOLO_BUILD_FEATURES "tcp,cpp"
#endif

namespace kolo::runner {
namespace {

bool has_feature(std::string_view name) {
  std::string_view all = KOLO_BUILD_FEATURES;
  size_t start = 0;
  while (start <= all.size()) {
    size_t end = all.find(',', start);
    if (end == std::string_view::npos) end = all.size();
    if (all.substr(start, end - start) == name) return true;
    start = end + 1;
  }
  return false;
}

struct Entry {
  const char* label;
  bool present;
};

void section(std::string& out, const char* title, std::initializer_list<Entry> entries) {
  out += fmt::format("\n{}:\n", title);
  for (const auto& e : entries) out += fmt::format("    [{}] {}\n", e.present ? "X" : " ", e.label);
}

}  // namespace

std::string check_build_report() {
  const char* path = std::getenv("PATH");
  const bool ssh = find_program("ssh", path ? path : "/usr/bin:/bin").has_value();
  std::string out = fmt::format("Kolo v{}:\n", KOLO_VERSION_STRING);
  section(out, "Available Frameworks",
          {{"C++ (kolo.h)", has_feature("cpp")},
           {"PyTorch", has_feature("torch")},
           {"NumPy", has_feature("numpy")}});
  section(out, "Available Controllers",
          {{"Kolo (TCP rendezvous store)", true}, {"MPI", has_feature("mpi")}});
  section(out, "Available Tensor Operations",
          {{"TCP", has_feature("tcp")},
           {"Shared memory", has_feature("shm")},
           {"MPI", has_feature("mpi")},
           {"NCCL", has_feature("nccl")}});
  section(out, "Launcher",
          {{"local fork/exec", true},
           {"remote hosts over ssh (ssh in PATH)", ssh},
           {"elastic (--min-np/--max-np)", has_feature("elastic")}});
  return out;
}

}  // namespace kolo::runner
