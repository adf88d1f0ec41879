#include "rendezvous/store.h"

#include "common/check.h"

namespace kolo::rendezvous {

Bytes to_bytes(std::string_view text) {
  return Bytes(text.begin(), text.end());
}
std::string to_string(const Bytes& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

Bytes Store::wait_get(const std::string& key, std::chrono::milliseconds timeout) {
  wait({key}, timeout);
  auto value = get(key);
  // A concurrent remove() between wait and get is a caller race we report.
  if (!value) throw AbortedError("store key '" + key + "' was removed while being waited for");
  return *value;
}

}  // namespace kolo::rendezvous
