#include "runner/elastic/host_registry.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "common/error.h"

namespace kolo::runner::elastic {
namespace {

// Longer than any job; keeps now + cooldown far from time_point overflow
// whatever the user passed as the upper bound.
constexpr double kLongestCooldownSeconds = 1e9;

}  // namespace

HostRegistry::HostRegistry(std::optional<std::pair<double, double>> cooldown,
                           int failures_to_blacklist)
    : cooldown_(cooldown), failures_to_blacklist_(failures_to_blacklist) {
  if (failures_to_blacklist_ < 1)
    throw InvalidArgument(fmt::format("a host is blacklisted after at least 1 failure, not {}",
                                      failures_to_blacklist_));
  if (cooldown_) {
    auto [lo, hi] = *cooldown_;
    if (!std::isfinite(lo) || !std::isfinite(hi) || lo < 0 || hi < lo)
      throw InvalidArgument(fmt::format(
          "blacklist cooldown must be 'lo-hi' seconds with 0 <= lo <= hi, not {}-{}", lo, hi));
  }
}

HostRegistry::Clock::duration HostRegistry::cooldown_for(int nth) const {
  auto [lo, hi] = *cooldown_;
  // ldexp doubles without overflow trouble: past ~2^1000 it is inf, and min()
  // brings that back to hi.
  double seconds = std::min({std::ldexp(lo, nth - 1), hi, kLongestCooldownSeconds});
  return std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

bool HostRegistry::out_at(const Host& h, Clock::time_point now) const {
  return h.out_until && now < *h.out_until;
}

HostChanges HostRegistry::update(const std::vector<HostSlots>& discovered, Clock::time_point now) {
  std::set<std::string> seen;
  for (const auto& d : discovered) {
    if (d.slots < 1)
      throw InvalidArgument(
          fmt::format("host '{}' has {} slots; at least 1 is needed", d.host, d.slots));
    if (!seen.insert(d.host).second)
      throw InvalidArgument(fmt::format("host '{}' is listed twice", d.host));
  }
  for (auto& [name, h] : hosts_) h.discovered_slots = 0;
  for (const auto& d : discovered) {
    Host& h = hosts_[d.host];
    h.discovered_slots = d.slots;
    if (!h.in_order) {
      h.in_order = true;
      order_.push_back(d.host);
    }
  }
  return recompute(now);
}

HostChanges HostRegistry::refresh(Clock::time_point now) {
  return recompute(now);
}

HostChanges HostRegistry::recompute(Clock::time_point now) {
  std::map<std::string, int> next;
  for (const auto& name : order_) {
    const Host& h = hosts_.at(name);
    if (h.discovered_slots > 0 && !out_at(h, now)) next[name] = h.discovered_slots;
  }
  HostChanges changes;
  for (const auto& name : order_) {
    auto before = usable_.find(name);
    auto after = next.find(name);
    int old_slots = before == usable_.end() ? 0 : before->second;
    int new_slots = after == next.end() ? 0 : after->second;
    if (new_slots > old_slots) changes.added.push_back(name);
    if (new_slots < old_slots) changes.removed.push_back(name);
  }
  usable_ = std::move(next);
  return changes;
}

std::optional<HostRegistry::Clock::time_point> HostRegistry::blacklist(const std::string& host,
                                                                       Clock::time_point now) {
  Host& h = hosts_[host];
  usable_.erase(host);
  if (!out_at(h, now)) {
    ++h.times_blacklisted;
    h.out_until = cooldown_ ? now + cooldown_for(h.times_blacklisted) : Clock::time_point::max();
  }
  if (*h.out_until == Clock::time_point::max()) return std::nullopt;
  return h.out_until;
}

HostRegistry::FailureVerdict HostRegistry::record_failure(const std::string& host,
                                                          Clock::time_point now) {
  Host& h = hosts_[host];
  FailureVerdict verdict;
  if (out_at(h, now)) {
    verdict.blacklisted = true;
    if (*h.out_until != Clock::time_point::max()) verdict.until = h.out_until;
    return verdict;
  }
  verdict.failures = ++h.failures;
  if (h.failures < failures_to_blacklist_) return verdict;
  h.failures = 0;
  verdict.blacklisted = true;
  verdict.until = blacklist(host, now);
  return verdict;
}

std::vector<std::string> HostRegistry::blacklisted(Clock::time_point now) const {
  std::vector<std::string> out;
  for (const auto& name : order_) {
    const Host& h = hosts_.at(name);
    if (h.discovered_slots > 0 && out_at(h, now)) out.push_back(name);
  }
  return out;
}

std::vector<HostSlots> HostRegistry::discovered() const {
  std::vector<HostSlots> out;
  for (const auto& name : order_)
    if (const Host& h = hosts_.at(name); h.discovered_slots > 0)
      out.push_back({name, h.discovered_slots});
  return out;
}

bool HostRegistry::is_blacklisted(const std::string& host, Clock::time_point now) const {
  auto it = hosts_.find(host);
  return it != hosts_.end() && out_at(it->second, now);
}

std::vector<HostSlots> HostRegistry::usable() const {
  std::vector<HostSlots> out;
  for (const auto& name : order_)
    if (auto it = usable_.find(name); it != usable_.end()) out.push_back({name, it->second});
  return out;
}

int HostRegistry::usable_slots() const {
  int total = 0;
  for (const auto& [name, slots] : usable_) total += slots;
  return total;
}

std::optional<HostRegistry::Clock::time_point> HostRegistry::next_cooldown_end() const {
  std::optional<Clock::time_point> earliest;
  for (const auto& [name, h] : hosts_) {
    // Hosts already back in usable_ have an end in the past: not a wake-up.
    bool waiting = h.discovered_slots > 0 && h.out_until &&
                   *h.out_until != Clock::time_point::max() && !usable_.count(name);
    if (waiting && (!earliest || *h.out_until < *earliest)) earliest = h.out_until;
  }
  return earliest;
}

}  // namespace kolo::runner::elastic
