#include "rendezvous/memory_store.h"

#include <charconv>

#include "common/error.h"

namespace kolo::rendezvous {

int64_t parse_counter(const std::string& key, const std::optional<Bytes>& value) {
  if (!value) return 0;
  int64_t n = 0;
  const char* begin = reinterpret_cast<const char*>(value->data());
  const char* end = begin + value->size();
  auto [ptr, ec] = std::from_chars(begin, end, n);
  if (ec != std::errc() || ptr != end || value->empty())
    throw InvalidArgument("store key '" + key + "' does not hold an integer counter");
  return n;
}

std::string wait_timeout_message(std::chrono::milliseconds timeout,
                                 const std::vector<std::string>& missing_keys) {
  std::string names;
  for (const auto& k : missing_keys) names += (names.empty() ? "'" : ", '") + k + "'";
  return "timed out after " + std::to_string(timeout.count()) + " ms waiting for store keys " +
         names;
}

void MemoryStore::set(const std::string& key, const Bytes& value) {
  {
    std::lock_guard lock(mutex_);
    data_[key] = value;
  }
  changed_.notify_all();
}

std::optional<Bytes> MemoryStore::get(const std::string& key) {
  std::lock_guard lock(mutex_);
  auto it = data_.find(key);
  if (it == data_.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> MemoryStore::missing(const std::vector<std::string>& keys) {
  std::lock_guard lock(mutex_);
  std::vector<std::string> out;
  for (const auto& k : keys)
    if (!data_.count(k)) out.push_back(k);
  return out;
}

void MemoryStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  auto all_present = [&] {
    for (const auto& k : keys)
      if (!data_.count(k)) return false;
    return true;
  };
  std::unique_lock lock(mutex_);
  if (changed_.wait_for(lock, timeout, all_present)) return;
  std::vector<std::string> absent;
  for (const auto& k : keys)
    if (!data_.count(k)) absent.push_back(k);
  throw TimeoutError(wait_timeout_message(timeout, absent));
}

int64_t MemoryStore::add(const std::string& key, int64_t delta) {
  int64_t result;
  {
    std::lock_guard lock(mutex_);
    auto it = data_.find(key);
    std::optional<Bytes> current;
    if (it != data_.end()) current = it->second;
    result = parse_counter(key, current) + delta;
    data_[key] = to_bytes(std::to_string(result));
  }
  changed_.notify_all();
  return result;
}

CompareSetResult MemoryStore::compare_set(const std::string& key,
                                          const std::optional<Bytes>& expected,
                                          const Bytes& desired) {
  CompareSetResult result;
  {
    std::lock_guard lock(mutex_);
    auto it = data_.find(key);
    bool matches = (it == data_.end()) ? !expected.has_value()
                                       : (expected.has_value() && it->second == *expected);
    if (matches) {
      data_[key] = desired;
      result.swapped = true;
      result.current = desired;
    } else if (it != data_.end()) {
      result.current = it->second;
    }
  }
  if (result.swapped) changed_.notify_all();
  return result;
}

bool MemoryStore::remove(const std::string& key) {
  std::lock_guard lock(mutex_);
  return data_.erase(key) > 0;
}

}  // namespace kolo::rendezvous
