// Which rank runs where: hosts are filled in the order given, as horovodrun
// does, and local/cross ranks follow Horovod's definitions so scripts that
// read them behave the same.
#pragma once

#include <string>
#include <vector>

#include "runner/hosts.h"

namespace kolo::runner {

struct RankSlot {
  std::string host;
  int rank = 0;
  int size = 0;
  int local_rank = 0;  // index among the ranks on this host
  int local_size = 0;  // ranks on this host
  // Among the hosts that have a rank with this local_rank: this host's index
  // and how many there are. With uneven slots, cross_size differs by
  // local_rank (hosts a:2,b:1 -> local_rank 0 has cross_size 2, 1 has 1).
  int cross_rank = 0;
  int cross_size = 0;
  bool operator==(const RankSlot&) const = default;
};

// np ranks over `hosts`, rank order = host order. Hosts past the last rank
// get none. Throws InvalidArgument for np < 1 or np above the total slots.
std::vector<RankSlot> assign_ranks(const std::vector<HostSlots>& hosts, int np);

}  // namespace kolo::runner
