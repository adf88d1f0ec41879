// Who takes part in the next elastic round, and with which rank. Pure
// logic, so every rule is unit-tested without processes.
//
// Rules: workers already running keep their place when their host is still
// listed and their slot still exists (a blacklisted host keeps its healthy
// workers: one failed worker does not take its neighbours down); free
// slots of hosts that are not closed get new workers until the round has
// `cap` workers. Ranks go host by host (so
// local ranks are contiguous), hosts that already run workers first, in the
// registry's stable order, and within a host the running workers before the
// new ones: rank 0 is a survivor whenever there is one, which matters
// because State.sync() broadcasts rank 0's committed state.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "runner/hosts.h"
#include "runner/rank_layout.h"

namespace kolo::runner::elastic {

struct RunningWorker {
  int id = 0;
  std::string host;
  int slot = 0;  // index among its host's slots
};

struct PlannedMember {
  std::optional<int> worker_id;  // none: a new worker to start on slot.host
  int host_slot = 0;             // index among the host's slots
  RankSlot slot;                 // its rank, size, local and cross ranks in the round
};

struct RoundPlan {
  std::vector<PlannedMember> members;  // in rank order
  std::vector<int> left_out;  // running workers with no place (host gone, slot gone, over cap)
};

// `hosts`: hosts in the registry's stable order with their slots.
// `running`: live workers not already on their way out. `cap`: the most
// workers the round may have. `closed`: hosts of `hosts` that keep their
// running workers but get no new ones (blacklisted).
RoundPlan plan_round(const std::vector<HostSlots>& hosts, const std::vector<RunningWorker>& running,
                     int cap, const std::set<std::string>& closed = {});

}  // namespace kolo::runner::elastic
