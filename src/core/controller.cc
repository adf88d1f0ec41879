#include "core/controller.h"

#include <algorithm>
#include <tuple>

#include "common/check.h"
#include "common/logging.h"
#include "common/quoted_list.h"
#include "core/fusion.h"

namespace kolo::core {
namespace {

constexpr uint64_t kFlagUncached = 1;  // some rank sends requests to the coordinator
constexpr uint64_t kFlagShutdown = 2;  // some rank asked to shut down

int64_t micros_between(Controller::Clock::time_point from, Controller::Clock::time_point to) {
  return std::chrono::duration_cast<std::chrono::microseconds>(to - from).count();
}

}  // namespace

Controller::Controller(backends::Backend& backend, Settings settings)
    : backend_(backend),
      settings_(std::move(settings)),
      cache_(settings_.cache_capacity),
      pending_hits_(settings_.cache_capacity),
      words_per_bitset_((settings_.cache_capacity + 63) / 64) {
  if (backend_.rank() == 0) {
    coordinator_.emplace(backend_.size(), settings_.stall,
                         [this](int rank) { return backend_.peer_name(rank); });
  }
}

void Controller::send_slow(const Request& request, Clock::time_point now,
                           Clock::time_point enqueued) {
  Request copy = request;
  copy.age_us = micros_between(enqueued, now);
  // The other ranks may hold this tensor as a cache hit; the slot must go,
  // or they would wait for a bit this rank never sets.
  if (ResponseCache::cacheable(copy)) {
    auto lookup = cache_.peek(copy);
    if (lookup.state != ResponseCache::State::kMiss) invalid_slots_.insert(lookup.slot);
  }
  to_send_.push_back(std::move(copy));
}

void Controller::classify(std::vector<TensorEntry>& entries, Clock::time_point now) {
  // A group goes one way as a whole: cached only if every member is a hit.
  std::map<std::string, bool> group_all_hits;
  std::vector<ResponseCache::Lookup> lookups(entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    Request& request = entries[i].request;
    request.rank = backend_.rank();
    bool fast = cache_enabled_ && joined_.empty() && ResponseCache::cacheable(request);
    if (fast) lookups[i] = cache_.lookup(request);
    bool hit = fast && lookups[i].state == ResponseCache::State::kHit;
    if (!request.group.empty()) {
      auto [it, inserted] = group_all_hits.emplace(request.group, hit);
      if (!inserted) it->second = it->second && hit;
    }
    if (!hit) lookups[i].state = ResponseCache::State::kMiss;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    TensorEntry& entry = entries[i];
    const Request& request = entry.request;
    bool hit = lookups[i].state == ResponseCache::State::kHit &&
               (request.group.empty() || group_all_hits[request.group]);
    if (!hit) send_slow(request, now, entry.enqueued);
    PendingEntries::node_type node = spare_pending_.take();
    PendingEntries::iterator it;
    if (node.empty()) {
      bool inserted = false;
      std::tie(it, inserted) = pending_.emplace(request.name, std::move(entry));
      KOLO_CHECK(inserted);  // the tensor queue refuses a name in flight
    } else {
      node.key() = request.name;  // into the node's own string and entry: no allocation
      node.mapped() = std::move(entry);
      auto inserted = pending_.insert(std::move(node));
      KOLO_CHECK(inserted.inserted);
      it = inserted.position;
    }
    if (hit) pending_hits_.set(lookups[i].slot, &it->second);
  }
}

void Controller::age_pending_hits(Clock::time_point now) {
  // A cached tensor that waits long, or any while ranks have joined (the
  // fast path is off then), goes to the coordinator, which sees who is
  // missing and reports stalls.
  pending_hits_.for_each([&](uint32_t slot, const TensorEntry* entry) {
    bool stalled = settings_.stall.enabled && now - entry->enqueued >= settings_.stall.warning_time;
    if (!stalled && joined_.empty()) return;
    if (stalled) invalid_slots_.insert(slot);
    Request request = entry->request;
    request.age_us = micros_between(entry->enqueued, now);
    to_send_.push_back(std::move(request));
    pending_hits_.erase(slot);
  });
}

std::vector<uint64_t> Controller::build_bits(bool want_shutdown) const {
  // Flags and invalid bits are stored inverted, so the AND yields their OR.
  std::vector<uint64_t> words(1 + 2 * words_per_bitset_, 0);
  uint64_t flags = 0;
  if (!to_send_.empty() || stall_expired_ || !offered_tuning_.empty()) flags |= kFlagUncached;
  if (want_shutdown) flags |= kFlagShutdown;
  words[0] = ~flags;
  pending_hits_.for_each([&](uint32_t slot, const TensorEntry*) {
    words[1 + slot / 64] |= uint64_t{1} << (slot % 64);
  });
  for (size_t w = 0; w < words_per_bitset_; ++w) words[1 + words_per_bitset_ + w] = ~uint64_t{0};
  for (uint32_t slot : invalid_slots_) {
    words[1 + words_per_bitset_ + slot / 64] &= ~(uint64_t{1} << (slot % 64));
  }
  return words;
}

ResponseList Controller::full_negotiation(Clock::time_point now) {
  std::string mine = encode_requests(to_send_);
  to_send_.clear();
  std::vector<std::string> all = backend_.gather_bytes(0, mine);
  std::string answer;
  if (coordinator_) {
    for (size_t r = 0; r < all.size(); ++r) {
      std::vector<Request> requests = decode_requests(all[r]);
      for (const auto& request : requests) {
        if (settings_.on_rank_request && request.op != OpType::kJoin) {
          settings_.on_rank_request(
              request.name, static_cast<int>(r),
              std::chrono::microseconds(std::max<int64_t>(request.age_us, 0)));
        }
      }
      coordinator_->add(static_cast<int>(r), requests, now);
    }
    ResponseList list = coordinator_->take_ready();
    stall_expired_ = false;
    list.tuning = std::move(offered_tuning_);
    offered_tuning_.clear();
    answer = encode_response_list(list);
  }
  backend_.broadcast_bytes(0, answer);
  return decode_response_list(answer);
}

CycleOutcome Controller::negotiate(std::vector<TensorEntry>& new_entries, bool want_shutdown) {
  Clock::time_point now = Clock::now();
  classify(new_entries, now);
  age_pending_hits(now);
  if (coordinator_) {
    if (auto warning = coordinator_->check_stalls(now)) {
      KOLO_LOG_WARNING("{}", *warning);
      if (settings_.on_stall_warning) settings_.on_stall_warning(*warning);
    }
    // Stalled past the limit: their error responses go out in this cycle's
    // full negotiation (the uncached flag forces one).
    if (coordinator_->expire_stalled(now)) stall_expired_ = true;
  }

  std::vector<uint64_t> words = build_bits(want_shutdown);
  invalid_slots_.clear();
  backend_.allreduce_and(words);
  uint64_t flags = ~words[0];

  CycleOutcome outcome;
  outcome.shutdown = (flags & kFlagShutdown) != 0;
  // Invalidated slots first: a rank's pending hit on such a slot goes to
  // the coordinator in this very cycle (the rank that invalidated it has
  // uncached requests, so the full negotiation below happens).
  for (uint32_t slot = 0; slot < cache_.capacity(); ++slot) {
    uint64_t bit = uint64_t{1} << (slot % 64);
    bool invalid = (words[1 + words_per_bitset_ + slot / 64] & bit) == 0;
    if (!invalid || !cache_.occupied(slot)) continue;
    words[1 + slot / 64] &= ~bit;
    if (const TensorEntry* entry = pending_hits_.find(slot)) {
      Request request = entry->request;
      request.age_us = micros_between(entry->enqueued, now);
      to_send_.push_back(std::move(request));
      pending_hits_.erase(slot);
    }
    cache_.erase(slot);
  }
  for (uint32_t slot = 0; slot < cache_.capacity(); ++slot) {
    if ((words[1 + slot / 64] & (uint64_t{1} << (slot % 64))) == 0) continue;
    KOLO_CHECK(cache_.occupied(slot));
    outcome.cached.push_back(&cache_.response(slot));
    cache_.touch(slot);
    // Every rank set this bit, so this rank waits on the slot.
    TensorEntry* entry = pending_hits_.find(slot);
    KOLO_CHECK(entry != nullptr);
    entry->response_cached = true;  // nothing for the engine to remember
    pending_hits_.erase(slot);
  }
  if ((flags & kFlagUncached) != 0) {
    ResponseList list = full_negotiation(now);
    joined_ = list.joined;
    outcome.cacheable = list.cacheable;
    outcome.tuning = std::move(list.tuning);
    for (auto& response : list.responses) outcome.responses.push_back(std::move(response));
  } else {
    KOLO_CHECK(to_send_.empty());
  }
  return outcome;
}

std::optional<TensorEntry> Controller::take_entry(const std::string& name) {
  auto it = pending_.find(name);
  if (it == pending_.end()) return std::nullopt;
  // Every path that runs a waiting hit or hands it to the coordinator drops
  // it from pending_hits_ first (negotiate, age_pending_hits, remember,
  // set_cache_enabled); pending_hits_ must not keep a pointer to it.
  KOLO_CHECK(!it->second.waiting_as_hit);
  TensorEntry entry = std::move(it->second);
  spare_pending_.erase_at(pending_, it);
  return entry;
}

void Controller::offer_tuning(std::string tuning) {
  KOLO_CHECK(coordinator_.has_value());
  offered_tuning_ = std::move(tuning);
}

void Controller::set_cache_enabled(bool enabled) {
  if (enabled == cache_enabled_) return;
  cache_enabled_ = enabled;
  if (enabled) return;
  // Waiting hits are not ready everywhere yet: they go to the coordinator
  // instead (every rank does the same with its own, in the same cycle).
  const auto now = Clock::now();
  pending_hits_.for_each([&](uint32_t, const TensorEntry* entry) {
    Request request = entry->request;
    request.age_us = micros_between(entry->enqueued, now);
    to_send_.push_back(std::move(request));
  });
  pending_hits_.clear();
  for (uint32_t slot = 0; slot < cache_.capacity(); ++slot)
    if (cache_.occupied(slot)) cache_.erase(slot);
}

void Controller::remember(const Request& request, const Response& response, size_t index) {
  if (!cache_enabled_) return;
  if (!ResponseCache::cacheable(request) || response.kind != Response::Kind::kRun) return;
  if (cache_.peek(request).state == ResponseCache::State::kHit) return;
  cache_.put(request, single_tensor(response, index));
  // A full cache gave this tensor the least recently used slot. A tensor
  // this rank waits on as a hit in that slot would now set a bit that
  // means this one, while the ranks that enqueue it later miss and ask the
  // coordinator: it would wait for ever (a step of more tensors than the
  // cache holds hung so). It goes to the coordinator too.
  const uint32_t slot = cache_.peek(request).slot;
  if (const TensorEntry* entry = pending_hits_.find(slot);
      entry != nullptr && entry->request.name != request.name) {
    Request waiting = entry->request;
    waiting.age_us = micros_between(entry->enqueued, Clock::now());
    to_send_.push_back(std::move(waiting));
    pending_hits_.erase(slot);
  }
}

std::string Controller::describe_pending() const {
  std::vector<std::string> names;
  for (const auto& [name, entry] : pending_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return quoted_list(names);
}

std::vector<std::string> Controller::fail_all(const Status& status) {
  std::vector<std::string> names;
  pending_hits_.clear();  // first: it unmarks the entries pending_ holds
  for (auto& [name, entry] : pending_) {
    entry.handle->complete(status);
    names.push_back(name);
  }
  pending_.clear();
  to_send_.clear();
  return names;
}

}  // namespace kolo::core
