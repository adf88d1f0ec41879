// TensorQueue: the hand-off from the framework threads that enqueue
// operations to the background thread that negotiates them, for one process
// set. It also owns the set of names in flight, so a name reused before its
// operation finished is refused at once, on the caller's thread.
#pragma once

#include <string>
#include <unordered_set>
#include <vector>

#include "common/spare_nodes.h"
#include "common/thread_annotations.h"
#include "core/tensor_entry.h"

namespace kolo::core {

class TensorQueue {
 public:
  // Adds `entries` atomically (a group is never split across cycles).
  // Throws InvalidArgument naming a name already in flight, or repeated
  // within `entries`; nothing is added then.
  void push(std::vector<TensorEntry> entries) KOLO_EXCLUDES(mutex_);
  // push() of a single entry, without a vector of one.
  void push(TensorEntry entry) KOLO_EXCLUDES(mutex_);
  // Takes everything pushed so far into `into` (cleared first). The two
  // vectors trade places, so the queue keeps `into`'s capacity for the next
  // pushes and a steady loop regrows neither.
  void take_all(std::vector<TensorEntry>& into) KOLO_EXCLUDES(mutex_);
  // The operations with these names finished; the names may be used again.
  void release(const std::vector<const std::string*>& names) KOLO_EXCLUDES(mutex_);
  // Fails every queued entry with `status` and returns nothing further.
  void fail_all(const Status& status) KOLO_EXCLUDES(mutex_);
  bool empty() const KOLO_EXCLUDES(mutex_);

 private:
  using Names = std::unordered_set<std::string>;
  // Adds `name` to in_flight_ (in a spare node when there is one); false if
  // it is there already.
  bool claim(const std::string& name) KOLO_REQUIRES(mutex_);

  mutable Mutex mutex_;
  std::vector<TensorEntry> entries_ KOLO_GUARDED_BY(mutex_);
  Names in_flight_ KOLO_GUARDED_BY(mutex_);
  SpareNodes<Names> spare_names_ KOLO_GUARDED_BY(mutex_);
};

}  // namespace kolo::core
