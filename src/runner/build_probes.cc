#include "runner/build_probes.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <random>
#include <sstream>

#include "common/errno_text.h"
#include "common/unique_fd.h"
#include "runner/process.h"

namespace kolo::runner {
namespace fs = std::filesystem;

namespace {

bool executable(const fs::path& p) {
  return ::access(p.c_str(), X_OK) == 0 && fs::is_regular_file(p);
}

// Reads what is left in a pipe whose writer has exited.
std::string drain(int fd) {
  std::string out;
  char buffer[4096];
  for (;;) {
    ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n > 0) {
      out.append(buffer, static_cast<size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return out;
    }
  }
}

// One line per module: "ok NAME" or "no NAME why".
constexpr const char* kProbeScript = R"(
import sys
for name in sys.argv[1:]:
    try:
        __import__(name)
        print("ok", name, flush=True)
    except BaseException as e:
        print("no", name, type(e).__name__ + ": " + str(e).splitlines()[0] if str(e) else type(e).__name__, flush=True)
)";

}  // namespace

std::optional<std::string> find_python(const std::string& kolorun_path,
                                       const std::string& path_variable) {
  const fs::path bin = fs::path(kolorun_path).parent_path();
  // <prefix>/lib/pythonX.Y/site-packages/kolo/bin/kolorun
  const fs::path lib_python = bin.parent_path().parent_path().parent_path();
  const std::string version = lib_python.filename().string();
  if (version.rfind("python", 0) == 0 && lib_python.parent_path().filename() == "lib") {
    const fs::path prefix_bin = lib_python.parent_path().parent_path() / "bin";
    for (const auto& name : {version, std::string("python3")})
      if (executable(prefix_bin / name)) return (prefix_bin / name).string();
  }
  if (executable(bin / "python3")) return (bin / "python3").string();
  return find_program("python3", path_variable);
}

bool PythonModules::imports(const std::string& module) const {
  return std::find(imported.begin(), imported.end(), module) != imported.end();
}

PythonModules probe_python_modules(const std::string& interpreter,
                                   const std::vector<std::string>& modules,
                                   std::chrono::milliseconds limit) {
  PythonModules result;
  result.interpreter = interpreter;
  SpawnSpec spec;
  spec.argv = {interpreter, "-c", kProbeScript};
  spec.argv.insert(spec.argv.end(), modules.begin(), modules.end());
  spec.env = current_environment();
  spec.out = Stream::pipe();
  spec.err = Stream::null();
  try {
    ChildProcess child(spec);
    // The output is a few short lines: the pipe holds them until the exit.
    const auto status = child.wait_for(limit);
    if (!status) {
      result.error = fmt::format("{} did not finish within {} s", interpreter,
                                 static_cast<double>(limit.count()) / 1000);
      return result;
    }
    std::istringstream lines(drain(child.stdout_fd()));
    std::string verdict, name;
    while (lines >> verdict >> name) {
      std::string why;
      std::getline(lines, why);
      if (verdict == "ok") {
        result.imported.push_back(name);
      } else {
        result.failed[name] = why.empty() ? why : why.substr(1);
      }
    }
    if (result.imported.empty() && result.failed.empty())
      result.error = fmt::format("{} {}", interpreter, status->describe());
  } catch (const std::exception& e) {
    result.error = e.what();
  }
  return result;
}

std::string shared_memory_problem() {
  std::random_device device;
  const std::string name = fmt::format("/kolo-check-build-{}-{:x}", ::getpid(), device());
  const UniqueFd fd(::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600));
  if (!fd.valid()) return fmt::format("shm_open failed: {}", errno_text(errno));
  ::shm_unlink(name.c_str());  // the mapping keeps it alive; nothing is left behind
  constexpr size_t kBytes = 1 << 16;
  std::string problem;
  if (::posix_fallocate(fd.get(), 0, kBytes) != 0) {
    problem = "cannot reserve space in /dev/shm";
  } else if (void* p = ::mmap(nullptr, kBytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
             p == MAP_FAILED) {
    problem = fmt::format("mmap failed: {}", errno_text(errno));
  } else {
    static_cast<volatile char*>(p)[kBytes - 1] = 1;
    ::munmap(p, kBytes);
  }
  return problem;
}

PluginProbe probe_plugin(const std::string& kolorun_path, const std::string& name) {
  const fs::path bin = fs::path(kolorun_path).parent_path();
  const std::string file = "libkolo_" + name + ".so";
  PluginProbe probe;
  for (const fs::path& candidate : {bin.parent_path() / "lib" / file, bin.parent_path() / file}) {
    if (!fs::exists(candidate)) continue;
    probe.path = candidate.string();
    void* handle = ::dlopen(probe.path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) {
      probe.state = PluginProbe::State::kBroken;
      const char* why = ::dlerror();
      probe.error = why ? why : "dlopen failed";
      return probe;
    }
    ::dlclose(handle);
    probe.state = PluginProbe::State::kLoads;
    return probe;
  }
  return probe;
}

}  // namespace kolo::runner
