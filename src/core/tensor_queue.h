// TensorQueue: the hand-off from the framework threads that enqueue
// operations to the background thread that negotiates them, for one process
// set. It also owns the set of names in flight, so a name reused before its
// operation finished is refused at once, on the caller's thread.
#pragma once

#include <mutex>
#include <string>
#include <unordered_set>
#include <vector>

#include "core/tensor_entry.h"

namespace kolo::core {

class TensorQueue {
 public:
  // Adds `entries` atomically (a group is never split across cycles).
  // Throws InvalidArgument naming a name already in flight, or repeated
  // within `entries`; nothing is added then.
  void push(std::vector<TensorEntry> entries);
  // Takes everything pushed so far.
  std::vector<TensorEntry> pop_all();
  // The operation named `name` finished; the name may be used again.
  void release(const std::string& name);
  // Fails every queued entry with `status` and returns nothing further.
  void fail_all(const Status& status);
  bool empty() const;

 private:
  mutable std::mutex mutex_;
  std::vector<TensorEntry> entries_;
  std::unordered_set<std::string> in_flight_;
};

}  // namespace kolo::core
