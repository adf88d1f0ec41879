#include "core/tensor_queue.h"

#include <fmt/format.h>

#include <iterator>

#include "common/error.h"

namespace kolo::core {

void TensorQueue::push(std::vector<TensorEntry> entries) {
  MutexLock lock(mutex_);
  // Each name goes into in_flight_ as it is checked (one hash, one copy); a
  // refused name takes back those this call added, so nothing is added then.
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string& name = entries[i].request.name;
    if (!in_flight_.insert(name).second) {
      for (size_t j = 0; j < i; ++j) in_flight_.erase(entries[j].request.name);
      throw InvalidArgument(
          fmt::format("tensor name '{}' is already in use by an operation that has not finished; "
                      "names must be unique among operations in flight",
                      name));
    }
  }
  entries_.insert(entries_.end(), std::make_move_iterator(entries.begin()),
                  std::make_move_iterator(entries.end()));
}

std::vector<TensorEntry> TensorQueue::pop_all() {
  MutexLock lock(mutex_);
  return std::exchange(entries_, {});
}

void TensorQueue::release(const std::vector<const std::string*>& names) {
  MutexLock lock(mutex_);
  for (const std::string* name : names) in_flight_.erase(*name);
}

void TensorQueue::fail_all(const Status& status) {
  std::vector<TensorEntry> entries;
  {
    MutexLock lock(mutex_);
    entries = std::exchange(entries_, {});
    for (const auto& entry : entries) in_flight_.erase(entry.request.name);
  }
  for (auto& entry : entries) entry.handle->complete(status);
}

bool TensorQueue::empty() const {
  MutexLock lock(mutex_);
  return entries_.empty();
}

}  // namespace kolo::core
