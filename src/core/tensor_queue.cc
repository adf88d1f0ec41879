#include "core/tensor_queue.h"

#include <fmt/format.h>

#include <iterator>

#include "common/error.h"

namespace kolo::core {

namespace {

[[noreturn]] void refuse_name_in_flight(const std::string& name) {
  throw InvalidArgument(
      fmt::format("tensor name '{}' is already in use by an operation that has not finished; "
                  "names must be unique among operations in flight",
                  name));
}

}  // namespace

bool TensorQueue::claim(const std::string& name) {
  Names::node_type node = spare_names_.take();
  if (node.empty()) return in_flight_.insert(name).second;
  node.value() = name;  // into the string the node had: no allocation
  auto inserted = in_flight_.insert(std::move(node));
  spare_names_.keep(std::move(inserted.node));  // refused: the node is handed back
  return inserted.inserted;
}

void TensorQueue::push(std::vector<TensorEntry> entries) {
  MutexLock lock(mutex_);
  // Each name goes into in_flight_ as it is checked (one hash, one copy); a
  // refused name takes back those this call added, so nothing is added then.
  for (size_t i = 0; i < entries.size(); ++i) {
    const std::string& name = entries[i].request.name;
    if (!claim(name)) {
      for (size_t j = 0; j < i; ++j) spare_names_.erase(in_flight_, entries[j].request.name);
      refuse_name_in_flight(name);
    }
  }
  entries_.insert(entries_.end(), std::make_move_iterator(entries.begin()),
                  std::make_move_iterator(entries.end()));
}

void TensorQueue::push(TensorEntry entry) {
  MutexLock lock(mutex_);
  if (!claim(entry.request.name)) refuse_name_in_flight(entry.request.name);
  entries_.push_back(std::move(entry));
}

void TensorQueue::take_all(std::vector<TensorEntry>& into) {
  into.clear();  // outside the lock: the caller's own entries
  MutexLock lock(mutex_);
  into.swap(entries_);
}

void TensorQueue::release(const std::vector<const std::string*>& names) {
  MutexLock lock(mutex_);
  for (const std::string* name : names) spare_names_.erase(in_flight_, *name);
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
