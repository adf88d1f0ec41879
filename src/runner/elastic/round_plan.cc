#include "runner/elastic/round_plan.h"

#include <algorithm>
#include <map>

namespace kolo::runner::elastic {

RoundPlan plan_round(const std::vector<HostSlots>& usable,
                     const std::vector<RunningWorker>& running, int cap,
                     const std::set<std::string>& closed) {
  struct HostPlan {
    const HostSlots* host;
    std::vector<std::pair<int, std::optional<int>>> picks;  // (slot, worker id or new)
  };
  std::map<std::pair<std::string, int>, int> occupant;  // (host, slot) -> worker id
  for (const auto& w : running) occupant[{w.host, w.slot}] = w.id;

  RoundPlan plan;
  std::vector<HostPlan> hosts;
  std::vector<int> kept;
  int count = 0;
  // Survivors first: they hold the committed state.
  for (const auto& h : usable) {
    HostPlan hp{&h, {}};
    for (int s = 0; s < h.slots; ++s) {
      auto it = occupant.find({h.host, s});
      if (it == occupant.end() || count >= cap) continue;
      hp.picks.emplace_back(s, it->second);
      kept.push_back(it->second);
      ++count;
    }
    hosts.push_back(std::move(hp));
  }
  for (const auto& w : running)
    if (std::find(kept.begin(), kept.end(), w.id) == kept.end()) plan.left_out.push_back(w.id);
  // Then new workers on free slots, host by host.
  for (auto& hp : hosts)
    if (!closed.count(hp.host->host))
      for (int s = 0; s < hp.host->slots && count < cap; ++s)
        if (occupant.find({hp.host->host, s}) == occupant.end()) {
          hp.picks.emplace_back(s, std::nullopt);
          ++count;
        }
  // Hosts with survivors before hosts with only new workers; stable otherwise.
  std::stable_partition(hosts.begin(), hosts.end(), [](const HostPlan& hp) {
    return std::any_of(hp.picks.begin(), hp.picks.end(),
                       [](const auto& p) { return p.second.has_value(); });
  });

  std::vector<HostSlots> counts;
  for (const auto& hp : hosts)
    if (!hp.picks.empty()) counts.push_back({hp.host->host, static_cast<int>(hp.picks.size())});
  if (count == 0) return plan;
  const std::vector<RankSlot> slots = assign_ranks(counts, count);
  size_t rank = 0;
  for (const auto& hp : hosts)
    for (const auto& [host_slot, worker] : hp.picks)
      plan.members.push_back({worker, host_slot, slots[rank++]});
  return plan;
}

}  // namespace kolo::runner::elastic
