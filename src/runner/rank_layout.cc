#include "runner/rank_layout.h"

#include <fmt/format.h>

#include <map>

#include "common/error.h"

namespace kolo::runner {

std::vector<RankSlot> assign_ranks(const std::vector<HostSlots>& hosts, int np) {
  if (np < 1) throw InvalidArgument(fmt::format("-np must be at least 1, not {}", np));
  // A bound well above any real job, so a typo (or a fuzzer) cannot make the
  // launcher build a layout of hundreds of millions of ranks.
  constexpr int kMaxRanks = 1 << 20;
  if (np > kMaxRanks)
    throw InvalidArgument(fmt::format("-np {} is above the limit of {} ranks", np, kMaxRanks));
  int64_t total = 0;
  for (const auto& h : hosts) total += h.slots;
  if (np > total)
    throw InvalidArgument(
        fmt::format("-np {} is more than the {} slot{} of the hosts given ({} host{})", np, total,
                    total == 1 ? "" : "s", hosts.size(), hosts.size() == 1 ? "" : "s"));

  std::vector<RankSlot> slots;
  std::map<int, int> hosts_with_local_rank;  // local_rank -> hosts seen so far with it
  int rank = 0;
  for (const auto& h : hosts) {
    const int count = std::min(h.slots, np - rank);
    for (int local = 0; local < count; ++local) {
      RankSlot s;
      s.host = h.host;
      s.rank = rank++;
      s.size = np;
      s.local_rank = local;
      s.local_size = count;
      s.cross_rank = hosts_with_local_rank[local]++;
      slots.push_back(s);
    }
    if (rank == np) break;
  }
  for (auto& s : slots) s.cross_size = hosts_with_local_rank[s.local_rank];
  return slots;
}

}  // namespace kolo::runner
