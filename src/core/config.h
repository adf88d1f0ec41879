// Config: every KOLO_* setting (with the HOROVOD_* names as aliases), read
// and checked once by Config::FromEnv() through the settings registry
// (common/settings/table.h) and passed around as const Config&. The engine's
// own settings are typed here; the layers below take theirs from `settings`
// (the backend registry hands them over), so core sees no transport type.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "common/settings/values.h"
#include "core/launch/foreign_launcher.h"

namespace kolo {

// Where this process sits in the job, as the launcher describes it.
struct RankLayout {
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  int cross_rank = 0;
  int cross_size = 1;
};

// How to reach the job's rendezvous store. An empty address means a
// single-process job that needs no store.
struct RendezvousConfig {
  std::string address;
  int port = 0;
  std::string secret;
  // Scopes this job's (or elastic round's) keys in the store.
  std::string prefix = "kolo";
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
  // The address of rank 0 at which this rank reached the store rank 0
  // offered over MPI (core/launch/store_over_mpi.h); empty otherwise.
  std::string reached_rank0_at;
};

// Elastic mode: kolorun's elastic driver started this process. The layout
// then comes from the driver at each init (a "round"), not from KOLO_RANK.
struct ElasticConfig {
  bool enabled = false;   // KOLO_ELASTIC
  std::string worker_id;  // KOLO_ELASTIC_WORKER: this process's id for the driver
  // How long an init waits for the driver to place it in a round.
  std::chrono::milliseconds join_timeout{std::chrono::seconds(660)};
};

// The engine's knobs (Horovod's names are aliases; see docs/config.md).
struct EngineSettings {
  // Allreduces that are ready together are fused up to this many bytes.
  size_t fusion_threshold_bytes = size_t{128} << 20;
  // How often the background thread negotiates: a longer cycle fuses more
  // tensors per collective, a shorter one adds less latency.
  std::chrono::microseconds cycle_time{1000};
  // Response cache slots per process set; 0 turns the fast path off.
  size_t cache_capacity = 1024;
  // A Chrome-trace timeline is written here from init when set.
  std::string timeline_path;
  bool timeline_mark_cycles = false;
  bool stall_check_enabled = true;
  std::chrono::milliseconds stall_warning_time{std::chrono::seconds(60)};
  // 0: never. Otherwise every pending operation fails once a tensor has
  // stalled this long.
  std::chrono::milliseconds stall_shutdown_time{0};
  // The engine thread in its own code this long is wedged (engine_liveness.h);
  // 0: never checked.
  std::chrono::milliseconds wedged_time{std::chrono::seconds(5)};
  // Test only (KOLO_TEST_WEDGE_ENGINE_SECONDS): the engine thread blocks this
  // long after its first collective; no program can wedge it from Python.
  std::chrono::milliseconds test_wedge_time{0};
  // "auto" or a name from backends::available_backends().
  std::string backend = "auto";
  // Freed outputs the engine keeps for reuse, at most this many bytes
  // (core/output_pool.h); 0 frees every output at once.
  size_t output_cache_bytes = size_t{256} << 20;
};

struct Config {
  RankLayout layout;
  RendezvousConfig rendezvous;
  EngineSettings engine;
  ElasticConfig elastic;
  // Set when mpirun, srun or torchrun (not kolorun) started this process:
  // the layout came from its variables, and without KOLO_RENDEZVOUS_ADDR
  // rank 0 hosts the store (core/launch/foreign_store.h).
  std::optional<launch::ForeignLauncher> foreign_launcher;
  // Every setting as read; the transports and algorithms take theirs from
  // here. Tests change one with settings.set("KOLO_SHM", "0").
  settings::Values settings;

  // Reads the environment; throws InvalidArgument naming the variable and
  // the bad value (also for inconsistent combinations such as rank >= size).
  // Without KOLO_SIZE, the layout comes from a foreign launcher's variables
  // when one set them (core/launch/foreign_launcher.h).
  static Config FromEnv();
  // The same from values already read (tools, tests), and the launcher
  // that gave the layout, if not kolorun.
  static Config FromSettings(const settings::Values& values,
                             std::optional<launch::ForeignLauncher> launcher = std::nullopt);
  // The effective layout and every setting, for debug logs.
  std::string Describe() const;
};

}  // namespace kolo
