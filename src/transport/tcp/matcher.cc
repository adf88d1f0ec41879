#include "transport/tcp/matcher.h"

#include <algorithm>

namespace kolo::transport::tcp {

void Matcher::post(const OperationPtr& recv) {
  posted_[{recv->peer, recv->tag}].push_back(recv);
}

OperationPtr Matcher::take_posted(int peer, Tag tag) {
  auto it = posted_.find({peer, tag});
  if (it == posted_.end()) return nullptr;
  OperationPtr op = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) posted_.erase(it);
  return op;
}

bool Matcher::cancel(const Operation* recv) {
  auto it = posted_.find({recv->peer, recv->tag});
  if (it == posted_.end()) return false;
  auto& queue = it->second;
  auto pos = std::find_if(queue.begin(), queue.end(),
                          [recv](const OperationPtr& op) { return op.get() == recv; });
  if (pos == queue.end()) return false;
  queue.erase(pos);
  if (queue.empty()) posted_.erase(it);
  return true;
}

std::vector<OperationPtr> Matcher::take_all_posted() {
  std::vector<OperationPtr> out;
  for (auto& [key, queue] : posted_)
    for (auto& op : queue) out.push_back(std::move(op));
  posted_.clear();
  return out;
}

void Matcher::push_unexpected(int peer, Tag tag, UnexpectedMessage message) {
  unexpected_[{peer, tag}].push_back(std::move(message));
}

std::optional<UnexpectedMessage> Matcher::take_unexpected(int peer, Tag tag) {
  auto it = unexpected_.find({peer, tag});
  if (it == unexpected_.end()) return std::nullopt;
  UnexpectedMessage message = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) unexpected_.erase(it);
  return message;
}

}  // namespace kolo::transport::tcp
