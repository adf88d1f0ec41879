#include "backends/registry.h"

#include <fmt/format.h>

#include "backends/backend_options.h"
#include "backends/host/host_backend.h"
#include "collectives/collective_settings.h"
#include "common/error.h"
#include "common/logging.h"
#include "transport/shm/shm_settings.h"
#include "transport/tcp/tcp_context.h"
#include "transport/tcp/tcp_settings.h"

namespace kolo::backends {

std::vector<std::string> available_backends() {
  if (mpi_available()) return {"tcp", "mpi"};
  return {"tcp"};
}

BackendOptions backend_options_from(const settings::Values& settings, int host_index) {
  BackendOptions options;
  options.name = settings.text("KOLO_BACKEND");
  options.tcp = transport::tcp::tcp_options_from(settings);
  options.shm = transport::shm::shm_options_from(settings);
  options.collectives = collectives::collective_options_from(settings);
  options.host_index = host_index;
  return options;
}

std::unique_ptr<Backend> create_backend(rendezvous::Store& store, int rank, int size,
                                        const settings::Values& settings, int host_index) {
  return create_backend(store, rank, size, backend_options_from(settings, host_index));
}

std::unique_ptr<Backend> create_backend(rendezvous::Store& store, int rank, int size,
                                        const BackendOptions& options) {
  if (options.name == "mpi") {
    // MPI finds its ranks itself; the store is not needed, but the caller's
    // layout must be MPI's.
    SelfConnectedWorld world = connect_mpi_world({});
    if (world.backend->rank() != rank || world.backend->size() != size) {
      throw InvalidArgument(fmt::format(
          "KOLO_BACKEND=mpi: MPI_COMM_WORLD makes this rank {} of {}, the launcher said {} of {}",
          world.backend->rank(), world.backend->size(), rank, size));
    }
    return std::move(world.backend);
  }
  if (options.name != "auto" && options.name != "tcp") {
    throw InvalidArgument(
        fmt::format("KOLO_BACKEND='{}' is not one of auto, tcp, mpi", options.name));
  }
  // "tcp" names the transport: no shared memory either.
  transport::shm::ShmOptions shm = options.shm;
  if (options.name == "tcp") shm.enabled = false;
  std::shared_ptr<transport::Context> context =
      transport::tcp::connect(store, rank, size, options.tcp);
  auto backend = std::make_unique<HostBackend>(std::move(context), options.collectives, shm,
                                               options.host_index);
  KOLO_LOG_DEBUG("rank {}: backend {} over {} ranks", rank, backend->name(), size);
  return backend;
}

}  // namespace kolo::backends
