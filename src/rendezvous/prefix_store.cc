#include "rendezvous/prefix_store.h"

#include "common/error.h"

namespace kolo::rendezvous {

PrefixStore::PrefixStore(std::string prefix, std::shared_ptr<Store> base)
    : prefix_(std::move(prefix)), base_(std::move(base)) {
  if (!base_) throw InvalidArgument("PrefixStore needs an underlying store");
}

void PrefixStore::set(const std::string& key, const Bytes& value) {
  base_->set(scoped(key), value);
}

std::optional<Bytes> PrefixStore::get(const std::string& key) {
  return base_->get(scoped(key));
}

void PrefixStore::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  std::vector<std::string> full;
  full.reserve(keys.size());
  for (const auto& k : keys) full.push_back(scoped(k));
  base_->wait(full, timeout);
}

int64_t PrefixStore::add(const std::string& key, int64_t delta) {
  return base_->add(scoped(key), delta);
}

CompareSetResult PrefixStore::compare_set(const std::string& key,
                                          const std::optional<Bytes>& expected,
                                          const Bytes& desired) {
  return base_->compare_set(scoped(key), expected, desired);
}

bool PrefixStore::remove(const std::string& key) {
  return base_->remove(scoped(key));
}

}  // namespace kolo::rendezvous
