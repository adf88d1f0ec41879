// The registry's side of the MPI backend: whether it is asked for, and
// connecting it through the plugin. The only file of libkolo that knows
// whether the plugin was built (KOLO_HAVE_MPI, set by CMake); it never
// calls MPI itself.
#include <fmt/format.h>

#include "backends/mpi/mpi_plugin_loader.h"
#include "backends/mpi_runtime.h"
#include "backends/registry.h"
#include "common/error.h"

namespace kolo::backends {
namespace {

MpiPlugin* load_plugin(std::string_view directory, std::string* why_not) {
#if KOLO_HAVE_MPI
  return load_mpi_plugin(directory, why_not);
#else
  (void)directory;
  *why_not = "this Kolo was built without MPI (no MPI library was found when it was built)";
  return nullptr;
#endif
}

}  // namespace

bool backend_connects_itself(const settings::Values& settings, const MpiCommunicator& comm) {
  return comm.given() || settings.text("KOLO_BACKEND") == "mpi";
}

SelfConnectedWorld connect_mpi_world(const MpiCommunicator& comm, std::string_view plugin_dir) {
  std::string why_not;
  MpiPlugin* plugin = load_plugin(plugin_dir, &why_not);
  if (plugin == nullptr) {
    throw InvalidArgument(fmt::format(
        "{} asks for the MPI backend, but its plugin ({}) cannot be loaded: {}",
        comm.given() ? "init(comm=...)" : "KOLO_BACKEND=mpi", kMpiPluginFileName, why_not));
  }
  return plugin->connect(comm);
}

bool mpi_available(std::string* why_not) {
  std::string reason;
  const bool loaded = load_plugin({}, &reason) != nullptr;
  if (!loaded && why_not != nullptr) *why_not = reason;
  return loaded;
}

std::optional<bool> mpi_thread_multiple() {
  std::string ignored;
  MpiPlugin* plugin = load_plugin({}, &ignored);
  if (plugin == nullptr) return std::nullopt;
  std::optional<MpiThreadLevel> level = plugin->thread_level();
  if (!level) return std::nullopt;
  return *level == MpiThreadLevel::kMultiple;
}

MpiRuntime::MpiRuntime(MpiPlugin& plugin) : plugin_(&plugin) {
  thread_multiple_ = plugin.initialize() == MpiThreadLevel::kMultiple;
  rank_ = plugin.world_rank();
  size_ = plugin.world_size();
}

void MpiRuntime::broadcast_from_rank0(std::string& data, std::chrono::milliseconds timeout,
                                      const std::string& why_it_failed) {
  plugin_->broadcast_world(data, timeout, why_it_failed);
}

std::optional<MpiRuntime> load_mpi_runtime(std::string* why_not) {
  std::string reason;
  MpiPlugin* plugin = load_plugin({}, &reason);
  if (plugin == nullptr) {
    if (why_not != nullptr) *why_not = reason;
    return std::nullopt;
  }
  return MpiRuntime(*plugin);
}

}  // namespace kolo::backends
