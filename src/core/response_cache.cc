#include "core/response_cache.h"

#include "common/check.h"
#include "core/operation_table.h"

namespace kolo::core {
namespace {

// Parameters that must match for a cached response to stand for a request;
// rank and age differ per rank and per step and do not count.
bool same_parameters(const Request& a, const Request& b) {
  return a.op == b.op && a.dtype == b.dtype && a.reduction == b.reduction && a.root == b.root &&
         a.device == b.device && a.shape == b.shape && a.values == b.values && a.group == b.group &&
         a.group_size == b.group_size;
}

}  // namespace

ResponseCache::ResponseCache(size_t capacity) : slots_(capacity) {}

bool ResponseCache::cacheable(const Request& request) {
  // Unnamed operations get a fresh name each call: caching them would only
  // evict useful entries.
  return operation_info(request.op).cacheable && request.name.find(".noname.") == std::string::npos;
}

ResponseCache::Lookup ResponseCache::peek(const Request& request) const {
  auto it = by_name_.find(request.name);
  if (it == by_name_.end()) return {State::kMiss, 0};
  if (!same_parameters(slots_[it->second].request, request)) return {State::kInvalid, it->second};
  return {State::kHit, it->second};
}

ResponseCache::Lookup ResponseCache::lookup(const Request& request) {
  Lookup result = peek(request);
  if (result.state == State::kHit) {
    ++hits_;
  } else {
    ++misses_;
  }
  return result;
}

void ResponseCache::put(const Request& request, const Response& response) {
  if (slots_.empty()) return;
  uint32_t slot = 0;
  if (auto it = by_name_.find(request.name); it != by_name_.end()) {
    slot = it->second;
  } else if (by_name_.size() < slots_.size()) {
    while (slots_[slot].occupied) ++slot;
  } else {
    for (uint32_t i = 1; i < slots_.size(); ++i) {
      if (slots_[i].last_used < slots_[slot].last_used) slot = i;
    }
    erase(slot);
  }
  Slot& s = slots_[slot];
  s.occupied = true;
  s.request = request;
  s.response = response;
  s.last_used = ++clock_;
  by_name_[request.name] = slot;
}

void ResponseCache::touch(uint32_t slot) {
  KOLO_CHECK(occupied(slot));
  slots_[slot].last_used = ++clock_;
}

void ResponseCache::erase(uint32_t slot) {
  if (!occupied(slot)) return;
  by_name_.erase(slots_[slot].request.name);
  slots_[slot] = Slot{};
}

bool ResponseCache::occupied(uint32_t slot) const {
  return slot < slots_.size() && slots_[slot].occupied;
}

const Response& ResponseCache::response(uint32_t slot) const {
  KOLO_CHECK(occupied(slot));
  return slots_[slot].response;
}

const Request& ResponseCache::request(uint32_t slot) const {
  KOLO_CHECK(occupied(slot));
  return slots_[slot].request;
}

}  // namespace kolo::core
