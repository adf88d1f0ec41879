#include "backends/host/host_topology.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <random>
#include <string>

#include "collectives/collectives.h"
#include "common/error.h"
#include "common/logging.h"
#include "common/machine.h"
#include "transport/shm/process_memory.h"
#include "transport/shm/shm_segment.h"
#include "transport/sub_context.h"

namespace kolo::backends {
namespace {

using transport::shm::ShmGroup;
using transport::shm::ShmSegment;

// Fixed-size records so one allgather carries them.
struct Identity {
  int64_t host_index;
  uint64_t machine;
  int64_t pid;
  // A word of this process the host's other ranks try to read directly,
  // and what they must find there (see single_copy_works).
  uint64_t probe_address;
  uint64_t probe_value;
};
struct SegmentName {
  char name[56];
  int64_t slot_bytes;
};
struct Attached {
  int64_t ok;
  int64_t reads_work;   // this rank can read every other local rank's memory
  int64_t single_copy;  // and wants allgathers and broadcasts to do so
};

uint64_t fnv1a(const std::string& text) {
  uint64_t hash = 1469598103934665603ULL;
  for (unsigned char c : text) hash = (hash ^ c) * 1099511628211ULL;
  return hash;
}

uint64_t machine_identity_hash() {
  return fnv1a(machine_identity());
}

template <typename Record>
std::vector<Record> allgather_records(transport::Context& context, transport::Tag tag,
                                      const Record& mine) {
  std::vector<Record> all(static_cast<size_t>(context.size()));
  collectives::allgather(context, tag, &mine, all.data(), sizeof(Record), DataType::kUInt8, {});
  return all;
}

std::vector<std::string> member_names(transport::Context& context, const std::vector<int>& ranks) {
  std::vector<std::string> names;
  for (int r : ranks) names.push_back(context.peer_name(r));
  return names;
}

// True when this rank may read the memory of every other rank of its host
// (process_vm_readv: same user, no policy against it, one pid namespace).
bool single_copy_works(const std::vector<Identity>& ids, const std::vector<int>& local, int rank) {
  return std::all_of(local.begin(), local.end(), [&](int r) {
    return r == rank ||
           transport::shm::can_read_process_memory(static_cast<pid_t>(ids[r].pid),
                                                   ids[r].probe_address, ids[r].probe_value);
  });
}

}  // namespace

HostTopology discover_host_topology(const std::shared_ptr<transport::Context>& context,
                                    int host_index, const transport::shm::ShmOptions& options,
                                    transport::Tag first_tag, GroupScope scope) {
  transport::Context& ctx = *context;
  const int rank = ctx.rank();
  HostTopology topo;
  // Stays alive (and unchanged) until every local rank has probed it, i.e.
  // past the "attached" exchange below.
  const uint64_t probe_word = std::random_device{}() * 0x9E3779B97F4A7C15ULL + 1;
  const auto ids =
      allgather_records(ctx, first_tag,
                        Identity{host_index, machine_identity_hash(), ::getpid(),
                                 reinterpret_cast<uintptr_t>(&probe_word), probe_word});
  std::map<std::pair<int64_t, uint64_t>, size_t> host_of_key;
  std::vector<size_t> host_of_rank(ids.size());
  for (size_t r = 0; r < ids.size(); ++r) {
    auto key = std::make_pair(ids[r].host_index, ids[r].machine);
    auto [it, fresh] = host_of_key.emplace(key, topo.hosts.size());
    if (fresh) topo.hosts.emplace_back();
    topo.hosts[it->second].push_back(static_cast<int>(r));
    host_of_rank[r] = it->second;
  }
  topo.host = static_cast<int>(host_of_rank[rank]);
  const std::vector<int>& mine = topo.hosts[topo.host];
  topo.local_rank = static_cast<int>(std::find(mine.begin(), mine.end(), rank) - mine.begin());
  // Every shared-memory path needs either one host or the cross-host
  // context of hierarchical collectives, which needs the same number of
  // ranks (at least 2) on every host and a group that may have one. Where
  // neither can be, a segment would serve nothing, and none is made.
  const bool same_shape_everywhere =
      topo.hosts.size() > 1 &&
      std::all_of(topo.hosts.begin(), topo.hosts.end(), [&](const auto& ranks) {
        return ranks.size() == mine.size() && ranks.size() > 1;
      });
  const bool cross_possible = scope == GroupScope::kJob && same_shape_everywhere;
  const bool wants_shm =
      options.enabled && mine.size() > 1 && (topo.hosts.size() == 1 || cross_possible);
  const size_t bytes = ShmGroup::segment_bytes(static_cast<int>(mine.size()), options.slot_bytes);

  // The host's lowest rank creates the segment and names it to everyone.
  ShmSegment segment;
  SegmentName named{};
  if (wants_shm && topo.local_rank == 0) {
    try {
      segment = ShmSegment::create("/kolo-", bytes);
      ShmGroup::format(segment, static_cast<int>(mine.size()));
      std::snprintf(named.name, sizeof named.name, "%s", segment.name().c_str());
    } catch (const Error& e) {
      KOLO_LOG_WARNING("rank {}: no shared memory on this host, ranks here use TCP: {}", rank,
                       e.what());
    }
  }
  const auto names = allgather_records(ctx, first_tag + 1, named);
  const std::string name = names[mine.front()].name;

  Attached attached{0, 0, 0};
  if (wants_shm && !name.empty()) {
    try {
      if (topo.local_rank != 0) segment = ShmSegment::open(name, bytes);
      attached.ok = 1;
      // With more ranks than cores the slots do better for allgather and
      // broadcast (measured with 4 ranks on 2 cores, docs/benchmarks.md): a
      // rank in a long read holds its core while the others wait for it.
      // Alltoall reads directly wherever the reads work: there they won
      // with 4 ranks on 2 cores too.
      const bool cores_enough =
          mine.size() <= static_cast<size_t>(std::max(1L, ::sysconf(_SC_NPROCESSORS_ONLN)));
      const bool wanted =
          options.single_copy == transport::shm::SingleCopy::kOn ||
          (options.single_copy == transport::shm::SingleCopy::kAuto && cores_enough);
      const bool works = options.single_copy != transport::shm::SingleCopy::kOff &&
                         single_copy_works(ids, mine, rank);
      attached.reads_work = works ? 1 : 0;
      attached.single_copy = works && wanted ? 1 : 0;
    } catch (const Error& e) {
      KOLO_LOG_WARNING("rank {}: cannot map shared memory {} of the host's first rank: {}", rank,
                       name, e.what());
    }
  }
  const auto reports = allgather_records(ctx, first_tag + 2, attached);
  // Everyone has mapped it or given up: the name can go.
  segment.unlink();
  const bool host_ok =
      wants_shm && std::all_of(mine.begin(), mine.end(), [&](int r) { return reports[r].ok == 1; });
  if (wants_shm && !host_ok && attached.ok == 1)
    KOLO_LOG_WARNING("rank {}: a rank of this host could not map shared memory; ranks here use TCP",
                     rank);
  if (host_ok) {
    std::vector<pid_t> pids;
    for (int r : mine) pids.push_back(static_cast<pid_t>(ids[r].pid));
    transport::shm::ShmOptions group_options = options;
    const bool single_copy =
        std::all_of(mine.begin(), mine.end(), [&](int r) { return reports[r].single_copy == 1; });
    group_options.single_copy =
        single_copy ? transport::shm::SingleCopy::kOn : transport::shm::SingleCopy::kOff;
    group_options.direct_reads_work =
        std::all_of(mine.begin(), mine.end(), [&](int r) { return reports[r].reads_work == 1; });
    if (topo.local_rank == 0 && options.single_copy != transport::shm::SingleCopy::kOff &&
        !single_copy)
      KOLO_LOG_INFO(
          "rank {}: large allgathers and broadcasts copy through shared memory twice: the ranks of "
          "this host outnumber its cores or cannot read each other's memory (process_vm_readv)",
          rank);
    topo.shm = std::make_shared<ShmGroup>(std::move(segment), topo.local_rank,
                                          member_names(ctx, mine), std::move(pids), group_options,
                                          [context] { context->check_health(); });
  }

  // Hierarchical collectives need that shape with shared memory on every
  // host.
  const bool every_rank_attached =
      std::all_of(reports.begin(), reports.end(), [](const Attached& a) { return a.ok == 1; });
  if (cross_possible && every_rank_attached) {
    std::vector<int> peers;
    for (const auto& ranks : topo.hosts) peers.push_back(ranks[topo.local_rank]);
    topo.cross =
        std::make_shared<transport::SubContext>(context, std::move(peers), kCrossHostGroupId);
  }
  KOLO_LOG_DEBUG("rank {}: {} host(s), {} rank(s) on this one, shared memory {}, hierarchical {}",
                 rank, topo.hosts.size(), mine.size(), topo.shm ? "on" : "off",
                 topo.cross ? "possible" : "off");
  return topo;
}

}  // namespace kolo::backends
