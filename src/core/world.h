// World: this process's place in the job, connected. Reaches the rendezvous
// store named by the Config, scopes it to the job, and builds the data
// plane. The engine (next issue) will own one per process set; tools such as
// kolo-bench use it directly.
#pragma once

#include <memory>

#include "core/config.h"
#include "rendezvous/store.h"
#include "transport/context.h"

namespace kolo {

struct World {
  std::shared_ptr<rendezvous::Store> store;  // scoped by config.rendezvous.prefix
  std::unique_ptr<transport::Context> context;
};

// A size-1 job gets an in-memory store and a one-rank context without any
// network. Throws on a store or mesh that cannot be reached in time, naming
// what is missing.
World connect_world(const Config& config);

}  // namespace kolo
