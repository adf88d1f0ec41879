#include "core/self_connected_world.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/logging.h"

namespace kolo {

std::unique_ptr<backends::Backend> connect_self_connected(Config& config,
                                                          const backends::MpiCommunicator& comm) {
  backends::SelfConnectedWorld world = backends::connect_mpi_world(comm);
  const int size = world.backend->size();
  const bool launcher_said = config.settings.is_set("KOLO_SIZE") || config.layout.size != 1;
  // A communicator given to init is the job by definition; only the whole
  // world must match what the launcher started.
  if (!comm.given() && launcher_said && config.layout.size != size) {
    const std::string said =
        config.foreign_launcher
            ? fmt::format("{} says {}", config.foreign_launcher->name, config.layout.size)
            : fmt::format("KOLO_SIZE={}", config.layout.size);
    throw InvalidArgument(fmt::format(
        "KOLO_BACKEND=mpi: MPI_COMM_WORLD has {} rank(s) but the launcher started {} ({}); start "
        "the ranks with mpirun -np {} (or kolorun --mpi) so MPI connects them",
        size, config.layout.size, said, config.layout.size));
  }
  config.layout = {world.backend->rank(), size,
                   world.local_rank,      world.local_size,
                   world.cross_rank,      world.cross_size};
  KOLO_LOG_DEBUG("rank {}: backend mpi over {} ranks ({} on this host)", config.layout.rank, size,
                 world.local_size);
  return std::move(world.backend);
}

}  // namespace kolo
