// ResponseCache: the negotiated response of each recently run tensor, in
// numbered slots, so a steady training loop skips the coordinator (after
// Horovod's response_cache.h).
//
// Every rank of a process set holds an identical cache: it changes only
// through put/touch/erase calls made in the same order on every rank (when a
// response runs, when a common hit runs, when a slot is invalidated), and
// slot choice and eviction are deterministic. A rank with a tensor ready
// sets the tensor's slot bit; one bitwise AND across ranks then says which
// cached tensors are ready everywhere.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "core/message.h"

namespace kolo::core {

class ResponseCache {
 public:
  explicit ResponseCache(size_t capacity);

  enum class State {
    kHit,      // same name, same parameters: the slot's bit can be set
    kMiss,     // name not cached
    kInvalid,  // name cached with other parameters (shape changed, ...):
               // the slot must be invalidated on every rank
  };
  struct Lookup {
    State state = State::kMiss;
    uint32_t slot = 0;
  };
  // Counts a hit or a miss.
  Lookup lookup(const Request& request);
  // The same answer without counting.
  Lookup peek(const Request& request) const;

  // Records that `request`'s tensor ran as `response` (a single-tensor
  // response). Takes the lowest free slot, or evicts the least recently
  // used one. A capacity of 0 caches nothing.
  void put(const Request& request, const Response& response);
  // Marks the slot used now, for LRU.
  void touch(uint32_t slot);
  void erase(uint32_t slot);

  bool occupied(uint32_t slot) const;
  const Response& response(uint32_t slot) const;
  const Request& request(uint32_t slot) const;
  size_t capacity() const { return slots_.size(); }
  size_t size() const { return by_name_.size(); }

  uint64_t hits() const { return hits_; }
  uint64_t misses() const { return misses_; }

  // Whether an operation may be cached at all: named collectives of data.
  static bool cacheable(const Request& request);

 private:
  struct Slot {
    bool occupied = false;
    Request request;
    Response response;
    uint64_t last_used = 0;
  };
  std::vector<Slot> slots_;
  std::unordered_map<std::string, uint32_t> by_name_;
  uint64_t clock_ = 0;
  uint64_t hits_ = 0;
  uint64_t misses_ = 0;
};

}  // namespace kolo::core
