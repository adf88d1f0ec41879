// PrefixStore: scopes every key of an underlying store under "<prefix>/", so
// jobs, elastic rounds and process sets never see each other's keys.
#pragma once

#include <memory>

#include "rendezvous/store.h"

namespace kolo::rendezvous {

class PrefixStore final : public Store {
 public:
  PrefixStore(std::string prefix, std::shared_ptr<Store> base);

  void set(const std::string& key, const Bytes& value) override;
  std::optional<Bytes> get(const std::string& key) override;
  void wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) override;
  int64_t add(const std::string& key, int64_t delta) override;
  CompareSetResult compare_set(const std::string& key, const std::optional<Bytes>& expected,
                               const Bytes& desired) override;
  bool remove(const std::string& key) override;

 private:
  std::string scoped(const std::string& key) const { return prefix_ + "/" + key; }

  std::string prefix_;
  std::shared_ptr<Store> base_;
};

}  // namespace kolo::rendezvous
