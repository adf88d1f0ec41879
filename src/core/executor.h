// Executor: runs one (possibly fused) response over a process set's backend:
// fusion-buffer copies, the collective, and the outputs the engine
// allocates. Completing handles is the engine's job; the executor only
// produces the data.
#pragma once

#include <optional>
#include <vector>

#include "backends/backend.h"
#include "core/fusion.h"
#include "core/message.h"
#include "core/output_pool.h"
#include "core/tensor_entry.h"

namespace kolo::core {

class Timeline;

class Executor {
 public:
  Executor(FusionBuffers& buffers, OutputPool& outputs, Timeline* timeline)
      : buffers_(buffers), outputs_(outputs), timeline_(timeline) {}

  // `entries` follow response.names; an empty slot is a tensor this rank
  // does not have (it joined), for which it contributes zeros. Throws the
  // backend's errors, with the operation and tensor names added.
  void run(backends::Backend& backend, const Response& response,
           std::vector<std::optional<TensorEntry>>& entries);

 private:
  void allreduce(backends::Backend& backend, const Response& response,
                 std::vector<std::optional<TensorEntry>>& entries);
  void allgather(backends::Backend& backend, const Response& response, TensorEntry& entry);
  void broadcast(backends::Backend& backend, const Response& response, TensorEntry& entry);
  void alltoall(backends::Backend& backend, const Response& response, TensorEntry& entry);
  void reducescatter(backends::Backend& backend, const Response& response, TensorEntry& entry);

  class Activity;

  FusionBuffers& buffers_;
  OutputPool& outputs_;  // the outputs the engine allocates
  Timeline* timeline_;
};

}  // namespace kolo::core
