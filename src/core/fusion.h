// Tensor fusion: small allreduces that every rank runs in the same cycle
// are merged into one collective over a persistent fusion buffer, which
// saves the per-message latency that dominates small tensors.
#pragma once

#include <cstddef>
#include <map>
#include <vector>

#include "core/message.h"

namespace kolo::core {

// Merges compatible allreduce responses (same dtype, reduce op, scaling
// and device) into fused responses of at most `threshold_bytes`, keeping
// the first member's position; everything else passes through unchanged.
// Deterministic, so every rank fuses its identical list identically.
// Takes pointers so that responses the cache answered are copied once, into
// their fused response, and not first each into a response of its own.
std::vector<Response> fuse_responses(const std::vector<const Response*>& responses,
                                     size_t threshold_bytes);

// Tensor i of a fused response as a response of its own (what the cache
// keeps per tensor).
Response single_tensor(const Response& fused, size_t i);

// Bytes of every tensor of an allreduce response.
size_t response_bytes(const Response& response);

// One persistent buffer per device, grown on demand and never shrunk, so a
// steady loop allocates nothing.
class FusionBuffers {
 public:
  std::byte* get(int32_t device, size_t bytes);

 private:
  std::map<int32_t, std::vector<std::byte>> buffers_;
};

}  // namespace kolo::core
