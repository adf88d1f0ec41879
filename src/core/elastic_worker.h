// The worker's half of the elastic protocol (rendezvous/elastic_protocol.h):
// asking kolorun's driver for a place in the next round, and reading the
// host changes it announced.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

#include "rendezvous/elastic_protocol.h"
#include "rendezvous/store.h"

namespace kolo::core {

// Announces this worker and waits for the driver's answer. Returns a kJoin
// assignment; throws WorkerRemovedError (removed or aborted, with the
// driver's reason) or TimeoutError when no answer comes within `timeout`.
rendezvous::elastic::Assignment join_next_round(rendezvous::Store& store,
                                                const std::string& worker_id,
                                                std::chrono::milliseconds timeout);

struct HostUpdates {
  int64_t seq = 0;       // the newest update announced
  unsigned changes = 0;  // HostChange bits of the updates after `acked`, up to seq
};

// The updates announced after `acked` (a seq from an assignment or an
// earlier call). One store read when nothing changed.
HostUpdates host_updates_since(rendezvous::Store& store, int64_t acked);

}  // namespace kolo::core
