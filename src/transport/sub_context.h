// SubContext: a Context over a subset of another context's ranks, for
// process sets. Ranks are renumbered 0..n-1 in the order given, and every tag
// is moved into a namespace of its own (the group id in the top 16 bits), so
// a set's messages never match another set's even when they share peers.
// No connections of its own: messages travel over the parent's.
#pragma once

#include <memory>
#include <vector>

#include "transport/context.h"

namespace kolo::transport {

class SubContext : public Context {
 public:
  static constexpr int kGroupIdBits = 16;
  static constexpr Tag kMaxTag = (Tag{1} << (64 - kGroupIdBits)) - 1;

  // `ranks` are parent ranks, distinct, and include the parent's own rank;
  // group_id is in [1, 65535]. Throws InvalidArgument otherwise.
  SubContext(std::shared_ptr<Context> parent, std::vector<int> ranks, uint32_t group_id);

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(ranks_.size()); }
  std::string peer_name(int rank) const override;
  std::unique_ptr<Request> isend(int peer, Tag tag, const void* data, size_t bytes) override;
  std::unique_ptr<Request> irecv(int peer, Tag tag, void* data, size_t bytes) override;
  void abort(const std::string& reason) override { parent_->abort(reason); }
  void check_health() override { parent_->check_health(); }

 private:
  int parent_rank(int rank) const;
  Tag parent_tag(Tag tag) const;

  std::shared_ptr<Context> parent_;
  std::vector<int> ranks_;
  uint32_t group_id_;
  int rank_ = -1;
};

}  // namespace kolo::transport
