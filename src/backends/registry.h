// Backends are chosen at run time by name; the choice is logged.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "collectives/options.h"
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
  // This rank's launcher host (KOLO_CROSS_RANK); with the machine identity
  // it decides which ranks share memory (see backends/host/host_topology.h).
  int host_index = 0;
};

// The names create_backend accepts besides "auto", for --check-build.
std::vector<std::string> available_backends();

// Connects `rank` of `size` through `store` (already scoped to this job and
// init) and returns the global group's backend. Throws InvalidArgument for
// an unknown name, TimeoutError when peers do not show up in time.
std::unique_ptr<Backend> create_backend(rendezvous::Store& store, int rank, int size,
                                        const BackendOptions& options);

}  // namespace kolo::backends
