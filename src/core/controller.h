// Controller: one process set's negotiation, run by the background thread
// once per cycle on every member (after Horovod's ComputeResponseList).
//
// Each cycle:
//  1. New entries are classified: a tensor whose response is cached sets
//     its cache slot's bit; anything else goes to the coordinator. A cached
//     name that goes to the coordinator anyway (its parameters changed, its
//     group was not all cached, it waited too long) invalidates its slot.
//  2. One bitwise-AND allreduce of [inverted flags | hit bits | inverted
//     invalid bits] tells every rank at once which cached tensors are ready
//     everywhere, which slots to drop, and whether any rank has uncached
//     requests or wants to shut down.
//  3. Only if some rank has uncached requests: requests are gathered at the
//     set's rank 0 (the coordinator), which answers with a ResponseList
//     broadcast to all. A steady training loop never gets here.
// Every rank then runs the same responses in the same order.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "backends/backend.h"
#include "common/spare_nodes.h"
#include "core/coordinator.h"
#include "core/pending_hits.h"
#include "core/response_cache.h"
#include "core/tensor_entry.h"

namespace kolo::core {

struct CycleOutcome {
  // To run in this order on every rank (not yet fused): first the responses
  // the cache answered, in slot order, which point into the cache and stay
  // valid until remember() changes it (the engine fuses them before
  // anything runs); then the coordinator's.
  std::vector<const Response*> cached;
  std::vector<Response> responses;
  // Both, in the order to run them.
  std::vector<const Response*> in_order() const {
    std::vector<const Response*> all = cached;
    for (const Response& response : responses) all.push_back(&response);
    return all;
  }
  // Whether slow-path responses may enter the cache after they run.
  bool cacheable = true;
  bool shutdown = false;  // some rank asked to shut down
  // The autotuner's new settings, to apply after these responses ran
  // (core/autotune/tuned_params.h); empty when they do not change.
  std::string tuning;
};

class Controller {
 public:
  using Clock = std::chrono::steady_clock;
  struct Settings {
    size_t cache_capacity = 1024;
    StallSettings stall;
    // Receives the coordinator's stall warnings (after they are logged).
    std::function<void(const std::string&)> on_stall_warning;
    // On the coordinating rank, for each request a full negotiation gathers:
    // the tensor, the set rank that asked and how long ago that rank
    // submitted it (the timeline's per-rank ready marks).
    std::function<void(const std::string& tensor, int set_rank, std::chrono::microseconds age)>
        on_rank_request;
  };

  Controller(backends::Backend& backend, Settings settings);

  // One negotiation. Moves the entries out of `new_entries` (held until
  // their response runs; the vector is the caller's to reuse). Throws the
  // backend's errors.
  CycleOutcome negotiate(std::vector<TensorEntry>& new_entries, bool want_shutdown);

  // The local entry for `name`, removed from the pending set; nullopt on a
  // rank that has none (it joined).
  std::optional<TensorEntry> take_entry(const std::string& name);
  // After tensor `index` of `response` ran: remember it for the fast path
  // (identically on every rank). A tensor already cached with the same
  // parameters is left as is, so a steady loop copies nothing here.
  void remember(const Request& request, const Response& response, size_t index);
  // On the coordinator: `tuning` goes to every rank with the next full
  // negotiation, which this forces (a steady loop has none otherwise), so
  // all ranks get it in the same cycle.
  void offer_tuning(std::string tuning);
  // Turns the response cache off (emptying it; cached tensors still waiting
  // go to the coordinator in the next cycle) or back on. Every rank must
  // call it at the same point of the cycle sequence, so the caches stay
  // identical.
  void set_cache_enabled(bool enabled);
  bool cache_enabled() const { return cache_enabled_; }

  // Fails every held entry with `status`; returns their names.
  std::vector<std::string> fail_all(const Status& status);

  // "'a', 'b' and 3 more": the tensors waiting here, for error messages.
  std::string describe_pending() const;

  const ResponseCache& cache() const { return cache_; }
  bool any_joined() const { return !joined_.empty(); }
  // Whether this rank holds entries that still wait for a response.
  bool has_pending() const { return !pending_.empty(); }

 private:
  void classify(std::vector<TensorEntry>& entries, Clock::time_point now);
  void send_slow(const Request& request, Clock::time_point now, Clock::time_point enqueued);
  void age_pending_hits(Clock::time_point now);
  std::vector<uint64_t> build_bits(bool want_shutdown) const;
  ResponseList full_negotiation(Clock::time_point now);

  backends::Backend& backend_;
  Settings settings_;
  ResponseCache cache_;
  std::optional<Coordinator> coordinator_;  // on the set's rank 0
  using PendingEntries = std::unordered_map<std::string, TensorEntry>;
  PendingEntries pending_;
  SpareNodes<PendingEntries> spare_pending_;  // nodes of taken entries, for the next ones
  // Slot -> its entry in pending_ (whose nodes stay put until erased; an
  // entry leaves pending_hits_ before it leaves pending_).
  PendingHits pending_hits_;
  std::vector<Request> to_send_;
  std::set<uint32_t> invalid_slots_;
  std::vector<int32_t> joined_;  // as of the last response list
  bool stall_expired_ = false;   // coordinator: stalled tensors to fail, not yet sent
  std::string offered_tuning_;   // coordinator: settings to send, not yet sent
  bool cache_enabled_ = true;
  size_t words_per_bitset_;
};

}  // namespace kolo::core
