// Public kolo::Engine objects as the ranks of one job, one thread each
// (built through internal::EngineAccess with a shared in-memory store).
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "core/public_engine_internal.h"
#include "kolo/engine.h"
#include "rendezvous/memory_store.h"
#include "support/engine_ranks.h"

namespace kolo::testing {

// Runs body(engine, rank) on `size` public engines as threads; each rank
// shuts down after its body returned.
inline void run_public(int size, const std::function<void(Engine&, int rank)>& body,
                       std::shared_ptr<rendezvous::Store> store = nullptr) {
  if (!store) store = std::make_shared<rendezvous::MemoryStore>();
  std::vector<std::optional<Engine>> engines(static_cast<size_t>(size));
  run_threads(size, [&](int rank) {
    core::EngineOptions options;
    options.store = store;
    engines[rank].emplace(
        internal::EngineAccess::create(engine_config(rank, size), std::move(options)));
  });
  run_threads(size, [&](int rank) {
    body(*engines[rank], rank);
    engines[rank]->shutdown();
  });
}

}  // namespace kolo::testing
