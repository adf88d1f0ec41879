// The ABI between Kolo and its MPI plugin, libkolo_mpi.so: one C entry point,
// kolo_mpi_plugin(version), returning the plugin's MpiPlugin object.
//
// Why a plugin: libkolo (and kolo._core) never link libmpi, so one build runs
// on machines without MPI; the plugin, built only where MPI was found at
// build time, links libmpi and is dlopened when a job asks for MPI
// (mpi_plugin_loader.h). Both sides are built from the same tree with the
// same compiler, so the interface is a C++ class; the version number refuses
// a plugin from another build. Bump kMpiPluginAbiVersion whenever this file,
// registry.h's MPI types or backend.h change.
//
// Exceptions thrown in the plugin are the kinds of common/error.h and are
// caught by name on the loading side like any other.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "backends/registry.h"

namespace kolo::backends {

inline constexpr uint32_t kMpiPluginAbiVersion = 2;
inline constexpr const char* kMpiPluginEntryPoint = "kolo_mpi_plugin";
inline constexpr const char* kMpiPluginFileName = "libkolo_mpi.so";

// What MPI promises to threads (MPI_THREAD_SINGLE .. MPI_THREAD_MULTIPLE).
enum class MpiThreadLevel : int { kSingle = 0, kFunneled = 1, kSerialized = 2, kMultiple = 3 };

class MpiPlugin {
 public:
  virtual ~MpiPlugin() = default;

  // Initialises MPI, asking for MPI_THREAD_MULTIPLE, unless something (mpi4py,
  // an earlier engine) already did; then Kolo never finalises it (the owner
  // does). When Kolo initialised it, MPI_Finalize runs at process exit: MPI
  // cannot be initialised twice, and init -> shutdown -> init must work.
  // Returns what MPI gave. Throws IoError when MPI refuses.
  virtual MpiThreadLevel initialize() = 0;
  // What MPI gives threads, or no value while MPI is not initialised (or
  // already finalised); initialises nothing.
  virtual std::optional<MpiThreadLevel> thread_level() = 0;
  // MPI_COMM_WORLD's rank and size (initialize() first).
  virtual int world_rank() = 0;
  virtual int world_size() = 0;
  // `data` on MPI_COMM_WORLD's rank 0 replaces `data` on every rank
  // (collective over MPI_COMM_WORLD). A broadcast not done within `timeout`
  // (MPI's network cannot connect the ranks, or a rank never came) cannot be
  // cancelled: it logs `why_it_failed` and ends the job with MPI_Abort.
  virtual void broadcast_world(std::string& data, std::chrono::milliseconds timeout,
                               const std::string& why_it_failed) = 0;
  // The backend over the communicator `comm` names (MPI_COMM_WORLD when
  // empty), with this rank's place on the hosts (MPI_COMM_TYPE_SHARED).
  // Collective over that communicator's members; initialises MPI if needed.
  // Throws InvalidArgument when this rank is not among comm.world_ranks.
  virtual SelfConnectedWorld connect(const MpiCommunicator& comm) = 0;
};

}  // namespace kolo::backends

// The plugin's one exported symbol: its MpiPlugin (which lives as long as the
// process), or nullptr when `abi_version` is not the one it was built with.
extern "C" kolo::backends::MpiPlugin* kolo_mpi_plugin(uint32_t abi_version);
using KoloMpiPluginEntry = kolo::backends::MpiPlugin* (*)(uint32_t);
