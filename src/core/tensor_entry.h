// TensorEntry: one rank's side of an enqueued operation: the request it
// negotiates with, the memory the operation reads and writes, and the handle
// it completes.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <vector>

#include "core/handle_state.h"
#include "core/message.h"

namespace kolo::core {

struct TensorEntry {
  Request request;
  // Caller-owned. `output` is null for operations whose output the engine
  // allocates (OutputBuffer::kEngine in core/operation_table.h); it may
  // equal `input`.
  const void* input = nullptr;
  void* output = nullptr;
  std::shared_ptr<HandleState> handle;
  // Set by Engine::enqueue, once for all the entries of one call.
  std::chrono::steady_clock::time_point enqueued{};
  // Set by the controller when the cycle ran this tensor from the response
  // cache: the engine then has nothing to remember of it.
  bool response_cached = false;
  // Set while PendingHits holds this entry as a waiting cache hit (only
  // PendingHits writes it): an entry must leave PendingHits before anyone
  // takes it, or PendingHits would keep a pointer to a moved-from entry.
  bool waiting_as_hit = false;
};

inline int64_t num_elements(const std::vector<int64_t>& shape) {
  return std::accumulate(shape.begin(), shape.end(), int64_t{1}, std::multiplies<>());
}

// Elements in one row of the first dimension (1 for a 1-d tensor).
inline int64_t row_elements(const std::vector<int64_t>& shape) {
  if (shape.empty()) return 1;
  return std::accumulate(shape.begin() + 1, shape.end(), int64_t{1}, std::multiplies<>());
}

}  // namespace kolo::core
