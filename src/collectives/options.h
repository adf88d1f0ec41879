// Algorithm choices and switch points; filled from the job's settings by
// collective_options_from (collective_settings.h; docs/config.md lists the
// variables and defaults).
#pragma once

#include <cstddef>

namespace kolo::collectives {

enum class AllreduceAlgorithm { kAuto, kRecursiveDoubling, kRing };
enum class BroadcastAlgorithm { kAuto, kTree, kPipelined };
// Hierarchical collectives across hosts (shared memory within, TCP between).
enum class HierarchicalMode { kAuto, kOn, kOff };

struct CollectiveOptions {
  // kAuto: recursive doubling below allreduce_ring_threshold bytes, ring
  // (reduce-scatter + allgather) at or above it.
  AllreduceAlgorithm allreduce_algorithm = AllreduceAlgorithm::kAuto;
  size_t allreduce_ring_threshold = 256 * 1024;  // KOLO_ALLREDUCE_RING_THRESHOLD
  // kAuto: binomial tree below broadcast_pipeline_threshold bytes, pipelined
  // chain at or above it, in chunks of broadcast_chunk_bytes.
  BroadcastAlgorithm broadcast_algorithm = BroadcastAlgorithm::kAuto;
  size_t broadcast_pipeline_threshold = 512 * 1024;  // KOLO_BROADCAST_PIPELINE_THRESHOLD
  size_t broadcast_chunk_bytes = 256 * 1024;         // KOLO_BROADCAST_CHUNK_BYTES
  // Ring steps are split into chunks of this size so reduction of one chunk
  // overlaps the transfer of the next (KOLO_RING_CHUNK_BYTES).
  size_t ring_chunk_bytes = 1024 * 1024;
  // The ring allreduce cuts a message into chunks of about 1/64 of it, at
  // least this big and at most ring_chunk_bytes: a 2 MiB message then still
  // pipelines (in 1 MiB chunks 2 ranks did two dependent transfers), while
  // large messages keep the per-chunk cost low (KOLO_RING_MIN_CHUNK_BYTES).
  size_t ring_min_chunk_bytes = 256 * 1024;

  // Ranks on one host (shared memory available) reduce up to this many
  // bytes in one phase: each publishes its whole input and reduces all of
  // them itself; larger messages are reduced shard by shard in rounds
  // (KOLO_SHM_SMALL_BYTES; at most KOLO_SHM_SLOT_BYTES).
  size_t shm_small_bytes = 64 * 1024;
  // Across hosts with several ranks each: reduce-scatter within the host,
  // ring across hosts per shard (all local ranks at once), allgather within
  // the host. kAuto and kOn both use it whenever the topology allows (every
  // host with the same number of ranks, at least 2, and shared memory);
  // kOff keeps the flat TCP algorithms (KOLO_HIERARCHICAL_ALLREDUCE,
  // KOLO_HIERARCHICAL_ALLGATHER, also read under their HOROVOD_ names).
  HierarchicalMode hierarchical_allreduce = HierarchicalMode::kAuto;
  HierarchicalMode hierarchical_allgather = HierarchicalMode::kAuto;
};

}  // namespace kolo::collectives
