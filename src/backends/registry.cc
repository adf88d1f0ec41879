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
  if (options.name != "auto" && options.name != "tcp") {
    throw InvalidArgument(fmt::format("KOLO_BACKEND='{}' is not one of auto, tcp", options.name));
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
