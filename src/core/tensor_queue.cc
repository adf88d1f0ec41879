#include "core/tensor_queue.h"

#include <fmt/format.h>

#include "common/error.h"

namespace kolo::core {

void TensorQueue::push(std::vector<TensorEntry> entries) {
  MutexLock lock(mutex_);
  std::unordered_set<std::string> added;
  for (const auto& entry : entries) {
    const std::string& name = entry.request.name;
    if (in_flight_.count(name) != 0 || !added.insert(name).second) {
      throw InvalidArgument(
          fmt::format("tensor name '{}' is already in use by an operation that has not finished; "
                      "names must be unique among operations in flight",
                      name));
    }
  }
  in_flight_.insert(added.begin(), added.end());
  for (auto& entry : entries) entries_.push_back(std::move(entry));
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
