// SpareNodes: nodes taken out of a node-based standard container
// (std::unordered_map, std::unordered_set) and kept to hold the next
// element, so a container whose elements come and go at a steady rate stops
// allocating. The engine's tables of tensor names in flight are such
// containers: a training step adds and removes one element per gradient,
// and the allocation and free of each node were a visible share of a small
// tensor's cost.
//
// Not thread-safe: it belongs to the container's owner and is used under
// the same lock as the container.
#pragma once

#include <cstddef>
#include <utility>
#include <vector>

namespace kolo {

template <class Container>
class SpareNodes {
 public:
  using Node = typename Container::node_type;

  // Keeps at most `max_spare` nodes: after a rare burst, the rest are freed.
  explicit SpareNodes(size_t max_spare = 4096) : max_spare_(max_spare) {}

  // Takes the element with `key` out of `container`, keeping its node;
  // returns false if there was none.
  template <class Key>
  bool erase(Container& container, const Key& key) {
    Node node = container.extract(key);
    if (node.empty()) return false;
    keep(std::move(node));
    return true;
  }
  // Takes the element at `it` out, keeping its node; the element's value is
  // the caller's to move out first (it stays in the spare node otherwise).
  // Named apart from erase(key): a template on the key would otherwise win
  // the overload for a non-const iterator.
  void erase_at(Container& container, typename Container::const_iterator it) {
    keep(container.extract(it));
  }

  // A spare node (empty when there is none): the caller fills it in and
  // inserts it, or uses the container's own insert when it is empty.
  Node take() {
    if (nodes_.empty()) return Node();
    Node node = std::move(nodes_.back());
    nodes_.pop_back();
    return node;
  }
  void keep(Node node) {
    if (!node.empty() && nodes_.size() < max_spare_) nodes_.push_back(std::move(node));
  }

  size_t size() const { return nodes_.size(); }

 private:
  size_t max_spare_;
  std::vector<Node> nodes_;
};

}  // namespace kolo
