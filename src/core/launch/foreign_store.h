// The rendezvous store of a job started by a foreign launcher (see
// foreign_launcher.h) that names no store of its own: rank 0 hosts one in
// its process, and the others find it through what the launcher offers:
// - every rank on one host: a private file (rendezvous_file.h), with a
//   secret rank 0 makes;
// - across hosts under an MPI launcher whose MPI the plugin can join: MPI
//   carries rank 0's address, port and secret (store_over_mpi.h);
// - across hosts otherwise: the host the launcher names for rank 0 (torchrun's
//   MASTER_ADDR, a Slurm step's first node) and a port (KOLO_RENDEZVOUS_PORT,
//   else torchrun's MASTER_PORT + 1 or a Slurm reserved port), with the
//   secret the user gives every rank in KOLO_SECRET: these launchers have no
//   private channel to carry one, and the store refuses to run without one.
// Anything else is an error that says which variables would make it work.
#pragma once

#include <memory>

#include "core/config.h"
#include "rendezvous/store.h"

namespace kolo::launch {

// For a Config with a foreign launcher, no KOLO_RENDEZVOUS_ADDR and more
// than one rank. Rank 0's store stays up as long as the returned Store
// lives. Throws TimeoutError (peers never found rank 0), IoError, or
// InvalidArgument (the launcher gives no way to meet). May record how it met
// rank 0 in config.rendezvous (reached_rank0_at).
std::shared_ptr<rendezvous::Store> connect_foreign_store(Config& config);

}  // namespace kolo::launch
