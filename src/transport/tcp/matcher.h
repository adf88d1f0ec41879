// Message matching, per (peer, tag) in FIFO order: receives posted before
// their message arrived, and messages that arrived before their receive.
// Not thread-safe by itself: TcpCore guards it with its mutex_.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "transport/tcp/operation.h"

namespace kolo::transport::tcp {

// A message body received before its receive was posted.
struct UnexpectedMessage {
  std::unique_ptr<uint8_t[]> data;
  size_t size = 0;
};

class Matcher {
 public:
  void post(const OperationPtr& recv);
  // The oldest receive posted for (peer, tag), removed; null if none.
  OperationPtr take_posted(int peer, Tag tag);
  bool has_posted(int peer, Tag tag) const { return posted_.count({peer, tag}) != 0; }
  // Removes a posted receive (a Request dropped before completion).
  bool cancel(const Operation* recv);
  std::vector<OperationPtr> take_all_posted();

  void push_unexpected(int peer, Tag tag, UnexpectedMessage message);
  std::optional<UnexpectedMessage> take_unexpected(int peer, Tag tag);
  void drop_all_unexpected() { unexpected_.clear(); }

 private:
  using Key = std::pair<int, Tag>;
  // Collectives use a fresh tag per operation, so empty queues are erased at
  // once; the maps hold only (peer, tag) pairs with something outstanding.
  std::map<Key, std::deque<OperationPtr>> posted_;
  std::map<Key, std::deque<UnexpectedMessage>> unexpected_;
};

}  // namespace kolo::transport::tcp
