// The hosts an elastic job may use right now: what discovery last reported,
// minus hosts blacklisted after their workers kept failing. Keeps hosts in the
// order they were first seen, so the hosts that survive a change keep the
// low ranks and their workers' state.
//
// Plain data, no threads and no clock of its own: the driver passes `now`,
// which keeps every decision testable with made-up time points.
#pragma once

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/hosts.h"

namespace kolo::runner::elastic {

// How the usable set moved between two update()/refresh() calls. Each list
// is in registry order (first discovered first); a host is in at most one.
struct HostChanges {
  std::vector<std::string> added;    // became usable, or gained slots
  std::vector<std::string> removed;  // stopped being usable (gone from discovery), or lost slots
  bool any() const { return !added.empty() || !removed.empty(); }
};

class HostRegistry {
 public:
  using Clock = std::chrono::steady_clock;

  // `cooldown` in seconds. None: a blacklisted host stays out for the rest
  // of the job. {lo, hi}: its n-th blacklisting lasts min(lo * 2^(n-1), hi)
  // seconds.
  // `failures_to_blacklist`: record_failure() blacklists a host at its
  // n-th failure since it was last blacklisted (KOLO_ELASTIC_HOST_FAILURES).
  // Throws InvalidArgument unless 0 < lo <= hi (both finite) and n >= 1.
  explicit HostRegistry(std::optional<std::pair<double, double>> cooldown,
                        int failures_to_blacklist = 1);

  // The newest discovery output (or the fixed -H / hostfile list, given
  // once). Returns how the usable set changed since the previous
  // update()/refresh(). Throws InvalidArgument for a host listed twice or
  // with fewer than 1 slot (parse_discovery_output never produces those).
  HostChanges update(const std::vector<HostSlots>& discovered, Clock::time_point now);

  // Re-checks cooldowns without new output: a host whose cooldown has ended
  // and that discovery still lists is reported as added.
  HostChanges refresh(Clock::time_point now);

  // A worker on `host` failed: the host is out of usable() at once, and the
  // next update()/refresh() does not report it as removed (the driver deals
  // with the failure itself). Returns when the host may be used again;
  // nullopt for never. A host that is already blacklisted at `now` (several
  // workers on it failing together) keeps its current end time: only a
  // new blacklisting doubles the cooldown. Hosts not (yet) discovered may be
  // blacklisted too.
  std::optional<Clock::time_point> blacklist(const std::string& host, Clock::time_point now);

  // A worker on `host` failed. Counts it; the failure that reaches the
  // threshold blacklists the host (blacklist(), and the count starts again).
  // While the host is already out, a failure (a worker started before the
  // blacklisting) counts nothing.
  struct FailureVerdict {
    int failures = 0;  // counted since the host was last blacklisted, this one included
    bool blacklisted = false;
    std::optional<Clock::time_point> until;  // blacklisted: when it ends; nullopt: never
  };
  FailureVerdict record_failure(const std::string& host, Clock::time_point now);
  int failures_to_blacklist() const { return failures_to_blacklist_; }

  bool is_blacklisted(const std::string& host, Clock::time_point now) const;
  // Hosts of the newest discovery output that are blacklisted at `now`, in
  // registry order.
  std::vector<std::string> blacklisted(Clock::time_point now) const;
  // Every host of the newest discovery output with its slots, blacklisted or
  // not, in registry order: where workers that are still running may stay.
  std::vector<HostSlots> discovered() const;

  // Usable hosts with their slots, in the order they were first discovered
  // (a host that leaves and comes back keeps its old position). This is the
  // set as of the last update()/refresh() (cooldowns judged at that call's
  // `now`), less hosts blacklisted since: a cooldown that ends in between
  // shows here only after the refresh() that reports it as added, so
  // usable() and the reported changes always agree.
  std::vector<HostSlots> usable() const;
  int usable_slots() const;

  // The earliest end of a cooldown among hosts that discovery still lists
  // and that are out for a limited time: the driver's next refresh(). nullopt
  // if there is none.
  std::optional<Clock::time_point> next_cooldown_end() const;

 private:
  struct Host {
    bool in_order = false;     // ever discovered, so it has its place in order_
    int discovered_slots = 0;  // 0: not in the newest discovery output
    int times_blacklisted = 0;
    int failures = 0;  // since the last blacklisting
    // When the current blacklisting ends; time_point::max() for never;
    // nullopt if the host was never blacklisted.
    std::optional<Clock::time_point> out_until;
  };

  Clock::duration cooldown_for(int nth) const;
  bool out_at(const Host& h, Clock::time_point now) const;
  HostChanges recompute(Clock::time_point now);

  std::optional<std::pair<double, double>> cooldown_;
  int failures_to_blacklist_;
  std::map<std::string, Host> hosts_;
  std::vector<std::string> order_;     // first-discovery order
  std::map<std::string, int> usable_;  // host -> slots as last reported, less blacklisted since
};

}  // namespace kolo::runner::elastic
