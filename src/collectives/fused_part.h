// One tensor of a fused operation, read and written where it lies: the
// engine's fused allreduce hands the backend one per tensor, and the
// shared-memory rounds read a message as a list of them (a plain message is
// one).
#pragma once

#include <cstddef>

namespace kolo::collectives {

// `count` elements read from `input` (null: this rank contributes zeros, as a
// joined rank does) and written to `output` (null: not written; may equal
// input).
struct FusedPart {
  const void* input = nullptr;
  void* output = nullptr;
  size_t count = 0;
};

}  // namespace kolo::collectives
