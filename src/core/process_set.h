// ProcessSet: a group of ranks that negotiates and runs collectives on its
// own. Id 0 is the global set. Every rank knows every set (so it can refuse
// a set it is not in with a clear error); only members have a backend and a
// controller.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "common/thread_annotations.h"
#include "core/controller.h"
#include "core/tensor_queue.h"

namespace kolo::core {

struct ProcessSet {
  int32_t id = 0;
  std::vector<int> ranks;  // global ranks, ascending
  int set_rank = -1;       // -1: this rank is not a member
  // Members only. The backend of a non-global set is a view over the
  // global one (no connections of its own).
  std::unique_ptr<backends::Backend> owned_backend;
  backends::Backend* backend = nullptr;
  std::unique_ptr<Controller> controller;
  TensorQueue queue;
  // Background thread only: the entries a cycle took from the queue, which
  // the next take reuses (TensorQueue::take_all).
  std::vector<TensorEntry> taken;
  // Counters that name unnamed operations ("allreduce.noname.7"); every
  // member makes its unnamed calls in the same order, so names match.
  // Guarded by the Engine's mutex_, taken by every enqueue.
  LockedBy<std::unordered_map<int, uint64_t>> unnamed_counters;

  bool member() const { return set_rank >= 0; }
};

// Sorts, checks for duplicates and range; throws InvalidArgument naming the
// problem.
std::vector<int> normalize_process_set_ranks(std::vector<int> ranks, int world_size);

}  // namespace kolo::core
