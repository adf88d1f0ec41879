#include "backends/registry.h"

#include <fmt/format.h>

#include "backends/host/host_backend.h"
#include "common/error.h"
#include "common/logging.h"
#include "transport/tcp/tcp_context.h"

namespace kolo::backends {

std::vector<std::string> available_backends() { return {"tcp"}; }

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
