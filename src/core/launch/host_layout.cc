#include "core/launch/host_layout.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <vector>

#include "common/error.h"
#include "common/machine.h"
#include "common/net_interfaces.h"

namespace kolo::launch {
namespace {

std::string host_key(int rank) {
  return fmt::format("launch/machine/{}", rank);
}

std::string via_key(int rank) {
  return fmt::format("launch/reached-rank0-at/{}", rank);
}

// After a rendezvous through rank 0's offer (store_over_mpi.h): the mesh
// goes over the network on which ranks of another machine reached rank 0,
// not over whatever interface comes first on rank 0's machine (a network
// the others cannot reach). Rank 0's machine listens on that address of
// its own; the other machines on the address that routes to it. What the
// user set (KOLO_ADDRESS, KOLO_IFACE) wins.
void choose_mesh_address(rendezvous::Store& store, Config& config,
                         const std::vector<std::string>& machine_of) {
  settings::Values& s = config.settings;
  if (!s.text("KOLO_ADDRESS").empty() || !s.text("KOLO_IFACE").empty()) return;
  for (size_t r = 1; r < machine_of.size(); ++r) {
    if (machine_of[r] == machine_of[0]) continue;
    const auto via = store.get(via_key(static_cast<int>(r)));
    if (!via) return;  // the ranks did not meet through an offer
    const std::string reached = rendezvous::to_string(*via);
    const bool on_rank0s_machine =
        machine_of[static_cast<size_t>(config.layout.rank)] == machine_of[0];
    const std::string address =
        on_rank0s_machine ? reached : net::local_address_routing_to(reached);
    if (!address.empty()) s.set("KOLO_ADDRESS", address);
    return;
  }
}

// This machine, as far as the launcher tells machines apart too.
std::string machine_of_this_rank(const ForeignLauncher& launcher) {
  const std::string machine = machine_identity();
  return launcher.node_key.empty() ? machine : fmt::format("{} {}", machine, launcher.node_key);
}

}  // namespace

void complete_foreign_layout(rendezvous::Store& store, Config& config) {
  RankLayout& layout = config.layout;
  const ForeignLauncher& launcher = *config.foreign_launcher;
  // Before the machine, so whoever has every machine has these too.
  if (!config.rendezvous.reached_rank0_at.empty())
    store.set(via_key(layout.rank), rendezvous::to_bytes(config.rendezvous.reached_rank0_at));
  store.set(host_key(layout.rank), rendezvous::to_bytes(machine_of_this_rank(launcher)));
  std::vector<std::string> keys;
  for (int r = 0; r < layout.size; ++r) keys.push_back(host_key(r));
  try {
    store.wait(keys, config.rendezvous.timeout);
  } catch (const TimeoutError&) {
    std::vector<int> missing;
    for (int r = 0; r < layout.size; ++r)
      if (!store.get(host_key(r))) missing.push_back(r);
    throw TimeoutError(fmt::format(
        "{} said it started {} ranks, but rank(s) {} did not reach the job's store within {} ms "
        "(KOLO_START_TIMEOUT): they did not start, or cannot reach rank 0",
        launcher.name, layout.size, fmt::join(missing, ", "), config.rendezvous.timeout.count()));
  }

  std::vector<std::string> machines;                 // hosts in order of their lowest rank
  std::map<std::string, std::vector<int>> ranks_on;  // machine -> its ranks, ascending
  std::vector<std::string> machine_of;               // rank -> its machine
  for (int r = 0; r < layout.size; ++r) {
    const std::string machine = rendezvous::to_string(*store.get(host_key(r)));
    if (ranks_on[machine].empty()) machines.push_back(machine);
    ranks_on[machine].push_back(r);
    machine_of.push_back(machine);
  }
  const std::string mine = rendezvous::to_string(*store.get(host_key(layout.rank)));
  const std::vector<int>& neighbours = ranks_on[mine];
  const int local_rank = static_cast<int>(
      std::find(neighbours.begin(), neighbours.end(), layout.rank) - neighbours.begin());
  const int local_size = static_cast<int>(neighbours.size());
  if (launcher.local_size != 0 &&
      (launcher.local_size != local_size || launcher.local_rank != local_rank))
    throw InvalidArgument(fmt::format(
        "{} says rank {} is local rank {} of {} on its host, but {} ranks of this job run on "
        "this machine ({}) and this is local rank {} among them: the launcher's environment "
        "does not describe this job",
        launcher.name, layout.rank, launcher.local_rank, launcher.local_size, local_size,
        mine.substr(0, mine.find(' ')), local_rank));
  layout.local_rank = local_rank;
  layout.local_size = local_size;
  layout.cross_size = static_cast<int>(machines.size());
  layout.cross_rank =
      static_cast<int>(std::find(machines.begin(), machines.end(), mine) - machines.begin());
  choose_mesh_address(store, config, machine_of);
}

}  // namespace kolo::launch
