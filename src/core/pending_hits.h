// PendingHits: the tensors a rank waits on as response-cache hits, by cache
// slot. A slot-indexed table rather than a tree: a step of many small
// tensors adds and removes one per tensor per cycle, and a tree paid an
// allocation for each. Walks go in slot order, as the bits they build do.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "core/tensor_entry.h"

namespace kolo::core {

class PendingHits {
 public:
  explicit PendingHits(size_t capacity) : entries_(capacity, nullptr) {}

  // The entry waiting on `slot`, or null.
  TensorEntry* find(uint32_t slot) const {
    return slot < entries_.size() ? entries_[slot] : nullptr;
  }
  // Every entry it holds has waiting_as_hit set; it clears the flag of an
  // entry it lets go (replaced, erased or cleared).
  void set(uint32_t slot, TensorEntry* entry) {
    if (entries_[slot] == nullptr) {
      ++count_;
    } else {
      entries_[slot]->waiting_as_hit = false;
    }
    entries_[slot] = entry;
    entry->waiting_as_hit = true;
  }
  void erase(uint32_t slot) {
    if (slot < entries_.size() && entries_[slot] != nullptr) {
      entries_[slot]->waiting_as_hit = false;
      entries_[slot] = nullptr;
      --count_;
    }
  }
  bool empty() const { return count_ == 0; }
  size_t size() const { return count_; }
  void clear() {
    if (count_ == 0) return;
    for (auto& entry : entries_) {
      if (entry != nullptr) entry->waiting_as_hit = false;
      entry = nullptr;
    }
    count_ = 0;
  }
  // fn(slot, entry) for every waiting hit, in slot order; fn may erase the
  // slot it is given.
  template <typename Fn>
  void for_each(Fn&& fn) {
    for (uint32_t slot = 0; slot < entries_.size() && count_ > 0; ++slot) {
      if (entries_[slot] != nullptr) fn(slot, entries_[slot]);
    }
  }
  template <typename Fn>
  void for_each(Fn&& fn) const {
    size_t seen = 0;
    for (uint32_t slot = 0; slot < entries_.size() && seen < count_; ++slot) {
      if (entries_[slot] != nullptr) {
        ++seen;
        fn(slot, static_cast<const TensorEntry*>(entries_[slot]));
      }
    }
  }

 private:
  std::vector<TensorEntry*> entries_;
  size_t count_ = 0;
};

}  // namespace kolo::core
