// Coordinator: rank 0 of a process set collects every rank's requests in a
// message table and decides which operations are ready on every rank, in
// the order they first arrived. It validates that the ranks agree (op,
// dtype, shape, reduce op, root, scaling, device) and turns a disagreement
// into an error response that names the tensor, the ranks and the values.
// It also keeps the join state and watches for stalls: a tensor some ranks
// have not submitted within the stall time limit fails on every rank that
// did, naming the ranks that did not, and the engine goes on.
//
// Pure logic over values: no I/O, so it is tested directly.
#pragma once

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/message.h"

namespace kolo::core {

struct StallSettings {
  bool enabled = true;
  std::chrono::milliseconds warning_time{std::chrono::seconds(60)};
  // How long a tensor may wait for the missing ranks before it fails;
  // 0: forever.
  std::chrono::milliseconds shutdown_time{0};
};

class Coordinator {
 public:
  using Clock = std::chrono::steady_clock;
  // `rank_name(r)` describes set rank r in messages ("rank 3 (host b)").
  Coordinator(int size, StallSettings stall, std::function<std::string(int)> rank_name);

  // Requests that arrived from `rank` this cycle.
  void add(int rank, const std::vector<Request>& requests, Clock::time_point now);
  // Responses for everything now ready (or failed), in arrival order, plus
  // the join state: first an error response for every tensor expire_stalled
  // marked (requests for it that arrived since included). Removes what it
  // returns from the table.
  ResponseList take_ready();
  // Run every cycle. Returns the warning text when tensors have waited past
  // the warning time (at most once per warning period).
  std::optional<std::string> check_stalls(Clock::time_point now);
  // Marks every tensor that waited past the shutdown time (and the rest of
  // its group) to fail in the next take_ready; true when any is marked.
  bool expire_stalled(Clock::time_point now);

  bool has_pending() const { return !table_.empty(); }
  const std::set<int>& joined() const { return joined_; }

 private:
  struct Entry {
    std::vector<std::optional<Request>> by_rank;
    int count = 0;
    Clock::time_point first_seen;
    uint64_t arrival = 0;
    std::string expired;  // set: fails with this text in the next take_ready
  };
  bool ready(const Entry& entry) const;
  bool group_ready(const std::string& group, int group_size) const;
  Response build(const std::string& name, const Entry& entry) const;
  std::string missing_ranks(const Entry& entry) const;
  static const Request& any_request(const Entry& entry);
  std::vector<Response> take_expired();

  int size_;
  StallSettings stall_;
  std::function<std::string(int)> rank_name_;
  std::map<std::string, Entry> table_;
  std::set<int> joined_;
  int last_joined_ = -1;
  uint64_t next_arrival_ = 0;
  Clock::time_point last_warning_{};
};

}  // namespace kolo::core
