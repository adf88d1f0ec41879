// MemoryStore: a Store for ranks that are threads of one process (tests,
// single-process jobs), and the state behind TcpStoreServer.
#pragma once

#include <condition_variable>
#include <map>
#include <mutex>

#include "rendezvous/store.h"

namespace kolo::rendezvous {

class MemoryStore final : public Store {
 public:
  void set(const std::string& key, const Bytes& value) override;
  std::optional<Bytes> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  CompareSetResult compare_set(const std::string& key, const std::optional<Bytes>& expected,
                               const Bytes& desired) override;
  bool remove(const std::string& key) override;

  // Keys of `keys` not present now (used by the TCP server's waiters).
  std::vector<std::string> missing(const std::vector<std::string>& keys);

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, Bytes> data_;  // guarded by mutex_
};

// Shared by MemoryStore and the TCP server: parse the decimal counter stored
// at a key (absent = 0); throws InvalidArgument for anything else.
int64_t parse_counter(const std::string& key, const std::optional<Bytes>& value);

// The TimeoutError text of a wait, shared so every Store words it alike.
std::string wait_timeout_message(std::chrono::milliseconds timeout,
                                 const std::vector<std::string>& missing_keys);

}  // namespace kolo::rendezvous
