// Backends are chosen at run time by name (KOLO_BACKEND); the choice is
// logged. This is the engine's way in: it hands over the job's settings and
// each layer below takes its own options from them, so the engine never
// sees a transport's types.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backends/backend.h"
#include "common/settings/values.h"
#include "rendezvous/store.h"

namespace kolo::backends {

// The names create_backend accepts besides "auto", for --check-build: "tcp",
// and "mpi" where its plugin loads (mpi_available).
std::vector<std::string> available_backends();

// Where the MPI backend finds its ranks (hvd.init(comm=...)): nothing given
// means MPI_COMM_WORLD; `world_ranks` a group of MPI_COMM_WORLD's ranks
// (ascending, MPI_Comm_create_group); `comm_address` the address of an
// MPI_Comm the caller made (mpi4py's MPI._addressof(comm)), which Kolo
// duplicates so its messages never meet the caller's.
struct MpiCommunicator {
  std::vector<int> world_ranks;
  const void* comm_address = nullptr;
  bool given() const { return !world_ranks.empty() || comm_address != nullptr; }
};

// A backend that found its ranks by itself (MPI) rather than through a
// rendezvous store, with this rank's place on the hosts as it sees them.
struct SelfConnectedWorld {
  std::unique_ptr<Backend> backend;
  int local_rank = 0;
  int local_size = 1;
  int cross_rank = 0;
  int cross_size = 1;
};

// Whether the job's backend connects its ranks itself, so no rendezvous
// store is needed: KOLO_BACKEND=mpi, or a communicator given to init.
bool backend_connects_itself(const settings::Values& settings, const MpiCommunicator& comm);

// The MPI backend over `comm` (see MpiCommunicator). `plugin_dir`: where
// libkolo_mpi.so is looked for; empty: next to the code that loads it
// (mpi/mpi_plugin_loader.h). Throws InvalidArgument naming why when the plugin
// cannot load (not built, libmpi missing: the loader's error text).
SelfConnectedWorld connect_mpi_world(const MpiCommunicator& comm, std::string_view plugin_dir = {});

// Whether the MPI backend can run here (its plugin loads); `why_not` gets the
// reason when it cannot. For mpi_built() and --check-build.
bool mpi_available(std::string* why_not = nullptr);

// Whether MPI gives MPI_THREAD_MULTIPLE; no value before MPI is initialised or
// where the plugin does not load. For mpi_threads_supported().
std::optional<bool> mpi_thread_multiple();

// Connects `rank` of `size` through `store` (already scoped to this job and
// init) and returns the global group's backend. `host_index` is this rank's
// launcher host (KOLO_CROSS_RANK, or the elastic round's); with the machine
// identity it decides which ranks share memory (host/host_topology.h).
// Throws TimeoutError when peers do not show up in time.
std::unique_ptr<Backend> create_backend(rendezvous::Store& store, int rank, int size,
                                        const settings::Values& settings, int host_index);

}  // namespace kolo::backends
