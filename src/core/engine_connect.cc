// How an engine joins its job: through the MPI communicator or the store
// (an elastic round first, where there is one), then the global process set
// and the ones given at init. Split from engine.cc, which runs the cycles.
#include <fmt/format.h>

#include "core/engine.h"
#include "core/self_connected_world.h"
#include "core/world.h"
#include "rendezvous/elastic_protocol.h"
#include "rendezvous/prefix_store.h"
#include "rendezvous/watched_store.h"

namespace kolo::core {

void Engine::connect(EngineOptions& options) {
  if (backends::backend_connects_itself(config_.settings, options.mpi_comm)) {
    // MPI: no store (mpirun gives none); the layout is the communicator's,
    // and each init makes a fresh communicator, so no init counter either.
    global_backend_ = connect_self_connected(config_, options.mpi_comm);
  } else {
    connect_through_store(options);
  }
  const auto& layout = config_.layout;

  std::vector<int> everyone(static_cast<size_t>(layout.size));
  for (int r = 0; r < layout.size; ++r) everyone[r] = r;
  MutexLock lock(mutex_);
  sets_[0] = make_set(0, everyone);
  cache_stats_[0] = std::make_unique<SetCache>();
  std::vector<std::vector<int>> normalized;
  for (auto& ranks : options.process_sets)
    normalized.push_back(normalize_process_set_ranks(ranks, layout.size));
  check_same_on_all_ranks(normalized);
  for (auto& ranks : normalized) {
    int32_t id = next_set_id_++;
    sets_[id] = make_set(id, std::move(ranks));
    cache_stats_[id] = std::make_unique<SetCache>();
  }
}

void Engine::connect_through_store(EngineOptions& options) {
  store_ = options.store ? options.store : connect_store(config_);
  if (config_.elastic.enabled) join_elastic_round();
  // Each init of a process gets fresh keys: the addresses published by an
  // earlier init in the same job are stale. Every rank inits the same
  // number of times, so the counters agree.
  int64_t generation = store_->add(
      fmt::format("{}/engine/inits/{}", config_.rendezvous.prefix, config_.layout.rank), 1);
  // An elastic round kolorun gives up ends every wait of its members (a
  // member that died after being placed never publishes its address).
  std::shared_ptr<rendezvous::Store> base = store_;
  if (elastic_round_ >= 0)
    base = std::make_shared<rendezvous::WatchedStore>(
        store_, rendezvous::elastic::round_over_key(elastic_round_));
  auto scoped = std::make_shared<rendezvous::PrefixStore>(
      fmt::format("{}/init{}", config_.rendezvous.prefix, generation), base);
  complete_layout(*scoped, config_);
  global_backend_ = connect_backend(*scoped, config_);
}

void Engine::join_elastic_round() {
  const auto a = join_next_round(*store_, config_.elastic.worker_id, config_.elastic.join_timeout);
  config_.layout = {a.rank, a.size, a.local_rank, a.local_size, a.cross_rank, a.cross_size};
  config_.rendezvous.prefix = rendezvous::elastic::round_prefix(a.round);
  elastic_round_ = a.round;
  elastic_hosts_seq_ = a.hosts_seq;
  elastic_newcomers_ = a.newcomers;
}

HostUpdates Engine::host_updates_since(int64_t acked) const {
  if (elastic_round_ < 0) return {};
  return core::host_updates_since(*store_, acked);
}

}  // namespace kolo::core
