#include "transport/sub_context.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <set>

#include "common/error.h"

namespace kolo::transport {

SubContext::SubContext(std::shared_ptr<Context> parent, std::vector<int> ranks, uint32_t group_id)
    : parent_(std::move(parent)), ranks_(std::move(ranks)), group_id_(group_id) {
  if (group_id_ == 0 || group_id_ >= (1u << kGroupIdBits)) {
    throw InvalidArgument(fmt::format("group id {} is outside [1, 65535]", group_id_));
  }
  if (std::set<int>(ranks_.begin(), ranks_.end()).size() != ranks_.size()) {
    throw InvalidArgument(fmt::format("group ranks [{}] repeat a rank", fmt::join(ranks_, ", ")));
  }
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (ranks_[i] < 0 || ranks_[i] >= parent_->size()) {
      throw InvalidArgument(
          fmt::format("group rank {} is outside [0, {})", ranks_[i], parent_->size()));
    }
    if (ranks_[i] == parent_->rank()) rank_ = static_cast<int>(i);
  }
  if (rank_ < 0) {
    throw InvalidArgument(
        fmt::format("rank {} is not in the group [{}]", parent_->rank(), fmt::join(ranks_, ", ")));
  }
}

int SubContext::parent_rank(int rank) const {
  if (rank < 0 || rank >= size()) {
    throw InvalidArgument(fmt::format("peer {} is outside the group of {}", rank, size()));
  }
  return ranks_[static_cast<size_t>(rank)];
}

Tag SubContext::parent_tag(Tag tag) const {
  if (tag > kMaxTag) throw InvalidArgument(fmt::format("tag {} exceeds a group's tag space", tag));
  return (Tag{group_id_} << (64 - kGroupIdBits)) | tag;
}

std::string SubContext::peer_name(int rank) const {
  return parent_->peer_name(parent_rank(rank));
}

std::unique_ptr<Request> SubContext::isend(int peer, Tag tag, const void* data, size_t bytes) {
  return parent_->isend(parent_rank(peer), parent_tag(tag), data, bytes);
}

std::unique_ptr<Request> SubContext::irecv(int peer, Tag tag, void* data, size_t bytes) {
  return parent_->irecv(parent_rank(peer), parent_tag(tag), data, bytes);
}

}  // namespace kolo::transport
