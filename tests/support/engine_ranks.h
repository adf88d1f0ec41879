// Test support: N engines as threads of one process, meeting in a shared
// MemoryStore and connected over loopback TCP, for engine tests:
//
//   kolo::testing::run_engines(4, [](kolo::core::Engine& engine, int rank) {
//     auto handle = engine.allreduce(...);
//     ...
//   });
//
// Engines are built concurrently (construction is collective) and shut down
// after every rank's function returned (behind a barrier). Link with kolo.
#pragma once

#include <functional>
#include <memory>
#include <vector>

#include "core/engine.h"
#include "rendezvous/memory_store.h"
#include "support/tcp_mesh.h"

namespace kolo::testing {

inline Config engine_config(int rank, int size) {
  Config config;
  config.layout = {rank, size, rank, size, 0, 1};
  // loopback_tcp_options() as settings: the backend takes them from there.
  config.settings.set("KOLO_ADDRESS", "127.0.0.1");
  config.settings.set("KOLO_START_TIMEOUT", "10");
  config.settings.set("KOLO_TIMEOUT_SECONDS", "20");
  config.engine.cycle_time = std::chrono::microseconds(500);
  return config;
}

struct EngineRunOptions {
  // Adjusts each rank's config (timeouts, cache, stall settings...).
  std::function<void(Config&)> configure;
  std::function<void(core::EngineOptions&, int rank)> engine_options;
  std::shared_ptr<rendezvous::Store> store;  // shared by consecutive runs when set
};

inline void run_engines(int size, const std::function<void(core::Engine&, int rank)>& body,
                        const EngineRunOptions& run = {}) {
  auto store = run.store ? run.store : std::make_shared<rendezvous::MemoryStore>();
  std::vector<std::unique_ptr<core::Engine>> engines(static_cast<size_t>(size));
  run_threads(size, [&](int rank) {
    Config config = engine_config(rank, size);
    if (run.configure) run.configure(config);
    core::EngineOptions options;
    options.store = store;
    if (run.engine_options) run.engine_options(options, rank);
    engines[rank] = std::make_unique<core::Engine>(config, std::move(options));
  });
  run_threads(size, [&](int rank) {
    body(*engines[rank], rank);
    // One rank's shutdown stops every rank (Horovod's semantics), so a rank
    // that finished first must not cut off the others' last operations.
    engines[rank]->barrier()->wait_for(std::chrono::seconds(60));
    engines[rank]->shutdown();
  });
}

// A 1-d float32 tensor over caller-owned vectors (out may be in: in place).
inline core::TensorArgs floats(std::string name, std::vector<float>& in, std::vector<float>& out) {
  return {
      std::move(name), in.data(), out.data(), DataType::kFloat32, {static_cast<int64_t>(in.size())},
      kCpuDevice};
}
inline core::TensorArgs floats(std::string name, std::vector<float>& buf) {
  return floats(std::move(name), buf, buf);
}

// Waits for a handle with a bound, so a broken engine fails the test
// instead of hanging it.
inline Status wait_for(const core::Handle& handle,
                       std::chrono::seconds limit = std::chrono::seconds(30)) {
  if (!handle->wait_for(limit))
    return Status(StatusCode::kTimeout, "handle did not complete in time");
  return handle->status();
}

}  // namespace kolo::testing
