// Store: the key-value service ranks meet in before the data plane exists.
// Implementations: MemoryStore (threads in one process), TcpStoreClient (talks
// to TcpStoreServer, hosted by the launcher), PrefixStore (scopes keys).
//
// Every call may block only as long as the timeout it is given (or the
// store's own I/O timeout); failures throw the exceptions of common/error.h
// (TimeoutError, IoError, AuthError, InvalidArgument).
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kolo::rendezvous {

using Bytes = std::vector<uint8_t>;

Bytes to_bytes(std::string_view text);
std::string to_string(const Bytes& bytes);

struct CompareSetResult {
  bool swapped = false;
  // The key's value after the call: `desired` if swapped, else whatever was
  // there (nullopt if the key does not exist).
  std::optional<Bytes> current;
};

class Store {
 public:
  virtual ~Store() = default;

  virtual void set(const std::string& key, const Bytes& value) = 0;
  // Returns the value, or nullopt if the key is absent. Never waits.
  virtual std::optional<Bytes> get(const std::string& key) = 0;
  // Blocks until every key exists. Throws TimeoutError naming the keys still
  // missing when `timeout` expires.
  virtual void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) = 0;
  // Atomically adds `delta` to the integer stored at key (absent = 0) and
  // returns the new value. The value is stored as decimal text, so get()
  // returns e.g. "3". A non-integer value throws InvalidArgument.
  virtual int64_t add(const std::string& key, int64_t delta) = 0;
  // Atomically: if the key's value equals `expected` (nullopt = key absent),
  // set it to `desired`.
  virtual CompareSetResult compare_set(const std::string& key, const std::optional<Bytes>& expected,
                                       const Bytes& desired) = 0;
  // Deletes the key; returns whether it existed.
  virtual bool remove(const std::string& key) = 0;

  // wait({key}, timeout) followed by get(key).
  Bytes wait_get(const std::string& key, std::chrono::milliseconds timeout);
};

}  // namespace kolo::rendezvous
