// WatchedStore: a store whose waits also end when a watch key appears.
// Elastic workers meet a round's peers through it: a round kolorun gives up
// (a member died just after being placed in it) has members that will never
// publish their addresses, and the survivors must learn that at once, with
// the reason, instead of at the end of the start timeout.
#pragma once

#include <chrono>
#include <memory>
#include <string>

#include "rendezvous/store.h"

namespace kolo::rendezvous {

class WatchedStore final : public Store {
 public:
  // `watch_key` is a key of `base`; its value is the reason in words. A wait
  // looks at it every `poll` (the store has no "any of these keys" wait).
  WatchedStore(std::shared_ptr<Store> base, std::string watch_key,
               std::chrono::milliseconds poll = std::chrono::milliseconds(50));

  void set(const std::string& key, const Bytes& value) override;
  std::optional<Bytes> get(const std::string& key) override;
  // As Store::wait, but throws AbortedError with the watch key's value as
  // soon as that key exists.
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  CompareSetResult compare_set(const std::string& key, const std::optional<Bytes>& expected,
                               const Bytes& desired) override;
  bool remove(const std::string& key) override;

 private:
  void throw_if_watched_key_set();

  std::shared_ptr<Store> base_;
  std::string watch_key_;
  std::chrono::milliseconds poll_;
};

}  // namespace kolo::rendezvous
