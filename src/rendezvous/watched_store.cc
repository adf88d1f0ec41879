#include "rendezvous/watched_store.h"

#include <algorithm>

#include "common/error.h"
#include "rendezvous/memory_store.h"

namespace kolo::rendezvous {

using Clock = std::chrono::steady_clock;

WatchedStore::WatchedStore(std::shared_ptr<Store> base, std::string watch_key,
                           std::chrono::milliseconds poll)
    : base_(std::move(base)), watch_key_(std::move(watch_key)), poll_(poll) {
  if (poll_.count() <= 0) throw InvalidArgument("WatchedStore needs a positive poll interval");
}

void WatchedStore::set(const std::string& key, const Bytes& value) {
  base_->set(key, value);
}

std::optional<Bytes> WatchedStore::get(const std::string& key) {
  return base_->get(key);
}

int64_t WatchedStore::add(const std::string& key, int64_t delta) {
  return base_->add(key, delta);
}

CompareSetResult WatchedStore::compare_set(const std::string& key,
                                           const std::optional<Bytes>& expected,
                                           const Bytes& desired) {
  return base_->compare_set(key, expected, desired);
}

bool WatchedStore::remove(const std::string& key) {
  return base_->remove(key);
}

void WatchedStore::throw_if_watched_key_set() {
  if (auto reason = base_->get(watch_key_)) throw AbortedError(to_string(*reason));
}

void WatchedStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  const auto deadline = Clock::now() + timeout;
  for (;;) {
    throw_if_watched_key_set();
    const auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
    try {
      base_->wait(keys, std::clamp(left, std::chrono::milliseconds(0), poll_));
      return;
    } catch (const TimeoutError&) {
      if (Clock::now() < deadline) continue;
      throw_if_watched_key_set();
      std::vector<std::string> missing;
      for (const auto& key : keys)
        if (!base_->get(key)) missing.push_back(key);
      throw TimeoutError(wait_timeout_message(timeout, missing));
    }
  }
}

}  // namespace kolo::rendezvous
