// World: this process's place in the job, connected. Reaches the rendezvous
// store named by the Config, scopes it to the job, and builds the data
// plane the way the engine does (the same backend, shared memory included).
// Tools such as kolo-bench use it directly.
#pragma once

#include <memory>

#include "backends/backend.h"
#include "core/config.h"
#include "rendezvous/store.h"

namespace kolo {

struct World {
  std::shared_ptr<rendezvous::Store> store;  // scoped by config.rendezvous.prefix
  std::unique_ptr<backends::Backend> backend;
};

// The job's rendezvous store as the Config names it, unscoped: an
// in-memory one for a size-1 job without a server, a client of the
// launcher's server, or under a foreign launcher that names none, one that
// rank 0 hosts (core/launch/foreign_store.h).
std::shared_ptr<rendezvous::Store> connect_store(Config& config);

// The global group's backend over `store` (already scoped), for the layout
// in `config`: what the engine connects with.
std::unique_ptr<backends::Backend> connect_backend(rendezvous::Store& store, const Config& config);

// Under a foreign launcher, fills in the layout the launcher does not give
// (local and cross ranks) through `scoped`; nothing otherwise. Collective.
void complete_layout(rendezvous::Store& scoped, Config& config);

// A size-1 job gets an in-memory store and a one-rank backend without any
// network. Throws on a store or mesh that cannot be reached in time, naming
// what is missing. Completes `config`'s layout (complete_layout).
World connect_world(Config& config);

}  // namespace kolo
