// Backends are chosen at run time by name (KOLO_BACKEND); the choice is
// logged. This is the engine's way in: it hands over the job's settings and
// each layer below takes its own options from them, so the engine never
// sees a transport's types.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "common/settings/values.h"
#include "rendezvous/store.h"

namespace kolo::backends {

// The names create_backend accepts besides "auto", for --check-build.
std::vector<std::string> available_backends();

// Connects `rank` of `size` through `store` (already scoped to this job and
// init) and returns the global group's backend. `host_index` is this rank's
// launcher host (KOLO_CROSS_RANK, or the elastic round's); with the machine
// identity it decides which ranks share memory (host/host_topology.h).
// Throws TimeoutError when peers do not show up in time.
std::unique_ptr<Backend> create_backend(rendezvous::Store& store, int rank, int size,
                                        const settings::Values& settings, int host_index);

}  // namespace kolo::backends
