// What a backend is built from, as each layer's own options: for the
// registry, and for tests and tools that build a backend with options the
// environment does not give.
#pragma once

#include <memory>
#include <string>

#include "backends/backend.h"
#include "collectives/options.h"
#include "common/settings/values.h"
#include "rendezvous/store.h"
#include "transport/shm/shm_options.h"
#include "transport/tcp/tcp_options.h"

namespace kolo::backends {

struct BackendOptions {
  // "auto" picks the best available; "tcp" forces Kolo's TCP transport.
  std::string name = "auto";
  transport::tcp::TcpOptions tcp;
  transport::shm::ShmOptions shm;
  collectives::CollectiveOptions collectives;
  // This rank's launcher host (see create_backend in registry.h).
  int host_index = 0;
};

BackendOptions backend_options_from(const settings::Values& settings, int host_index);

std::unique_ptr<Backend> create_backend(rendezvous::Store& store, int rank, int size,
                                        const BackendOptions& options);

}  // namespace kolo::backends
