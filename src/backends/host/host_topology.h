// HostTopology: which ranks of a group share a host, and the shared-memory
// group and cross-host context built from that.
//
// Discovered over the group's own TCP context when the backend is created:
// every rank gives its launcher host index (KOLO_CROSS_RANK: kolorun's -H
// order) and a machine identity (hostname and boot id). Ranks with both
// equal form one host; the two together keep namespaces that the user
// listed as separate hosts apart (they share /dev/shm but are meant to talk
// over their links), and keep a wrong environment from joining machines
// that share nothing.
//
// On each host with more than one rank (where a shared-memory path can use
// it: see discover_host_topology), the lowest rank creates a segment,
// the others map it, and once every rank of the job reports back it is
// unlinked (so nothing is left behind, whatever happens later). A host where
// any rank fails to map it (no /dev/shm, a container without it shared)
// goes without shared memory, with a warning; its ranks use TCP.
#pragma once

#include <sys/types.h>

#include <memory>
#include <vector>

#include "collectives/options.h"
#include "transport/context.h"
#include "transport/shm/shm_group.h"
#include "transport/shm/shm_options.h"

namespace kolo::backends {

// The SubContext group id of the cross-host context (process sets use
// lower ids).
inline constexpr uint32_t kCrossHostGroupId = 65535;

struct HostTopology {
  std::vector<std::vector<int>>
      hosts;           // ranks of each host, ascending; hosts ordered by first rank
  int host = 0;        // this rank's host (index into hosts)
  int local_rank = 0;  // index of this rank in hosts[host]
  // The host's shared-memory group; null when the host has one rank, or
  // shared memory is off or failed there.
  std::shared_ptr<transport::shm::ShmGroup> shm;
  // Every host has the same number of ranks (at least 2) and shared memory:
  // `cross` then connects the ranks with this local rank, one per host, in
  // host order (null otherwise, and with a single host).
  std::shared_ptr<transport::Context> cross;

  bool single_host() const { return hosts.size() == 1; }
};

// Which groups may build a cross-host context (and so use shared memory on
// several hosts): the job's own group. A process set's context is a
// SubContext, and the cross-host one would nest inside it, which the tag
// space does not allow (a group id takes the tag's top bits once): a set
// gets shared memory only when all its members share one host, and TCP
// otherwise.
enum class GroupScope { kJob, kProcessSet };

// Collective over `context`: every rank calls it with its own host index.
// Uses tags first_tag, first_tag+1, first_tag+2. A segment is mapped only
// where a shared-memory path can use it: one host, or hosts of the same
// number of ranks (at least 2) with a cross-host context allowed.
HostTopology discover_host_topology(const std::shared_ptr<transport::Context>& context,
                                    int host_index, const transport::shm::ShmOptions& options,
                                    transport::Tag first_tag, GroupScope scope = GroupScope::kJob);

}  // namespace kolo::backends
