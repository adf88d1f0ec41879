// The rendezvous of a job that an MPI launcher (OpenMPI's mpirun, MPICH's
// Hydra; Kubeflow's MPIJob runs mpirun) started on several hosts, with MPI
// itself as the trusted channel: no user secret and no fixed port needed.
//
// Rank 0 starts the store on all interfaces, on KOLO_RENDEZVOUS_PORT or an
// ephemeral port, with KOLO_SECRET or a fresh secret, and broadcasts over
// MPI_COMM_WORLD where it can be reached (store_offer.h): its IPv4
// addresses (KOLO_IFACE's only, when set), the port and, when it made one,
// the secret. The others try the addresses in order, each try bounded,
// until one answers or KOLO_START_TIMEOUT passes. What the user set wins:
// a rank with KOLO_SECRET uses its own.
//
// MPI's broadcast has no time limit of its own: a rank that cannot take
// part (no plugin on its host) fails at once and exits, and mpirun then ends
// the job; a broadcast MPI cannot deliver within KOLO_START_TIMEOUT (its
// network does not connect the hosts) ends the job through MPI_Abort with
// the reason, since a pending MPI call cannot be cancelled.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/config.h"
#include "core/launch/hosted_store.h"
#include "core/launch/store_offer.h"
#include "rendezvous/store.h"

namespace kolo::launch {

// The store over MPI; nullptr (and the reason in *why_not) when MPI cannot
// carry the offer here: the plugin does not load, or MPI_COMM_WORLD is not
// the launcher's world (a plugin built for another MPI library). Collective
// over MPI_COMM_WORLD when it returns a store or throws.
// Records in config.rendezvous.reached_rank0_at where this rank reached
// rank 0 (host_layout.h then puts the mesh on that network).
std::shared_ptr<rendezvous::Store> connect_store_over_mpi(Config& config, std::string* why_not);

// The two halves, for any channel that carries rank 0's offer to the others.
// Rank 0: hosts the store and returns it with the offer to send; throws what
// host_store throws (the caller sends the reason instead).
struct OfferedStore {
  std::shared_ptr<HostedStore> store;
  StoreOffer offer;
};
OfferedStore offer_store(const Config& config, const std::vector<std::string>& addresses);
// Every other rank: connects to the first address of `offer` that answers
// (in *reached, when given).
// Throws IoError with rank 0's reason when the offer is an error, TimeoutError
// naming every address tried when none answered in time.
std::shared_ptr<rendezvous::Store> connect_to_offer(const Config& config, const StoreOffer& offer,
                                                    std::string* reached = nullptr);

}  // namespace kolo::launch
