// The job's world when its backend connects the ranks itself (MPI): no
// rendezvous store is needed (plain `mpirun -np 2 python train.py` gives
// none), and the layout comes from the communicator instead of the launcher.
#pragma once

#include <memory>

#include "backends/registry.h"
#include "core/config.h"

namespace kolo {

// Connects the global backend over `comm` and rewrites config.layout with
// its rank, size and hosts. Throws InvalidArgument when the launcher's size
// (KOLO_SIZE, or the layout a launcher gave) disagrees with MPI_COMM_WORLD's,
// which happens when ranks started without mpirun each see a world of one.
std::unique_ptr<backends::Backend> connect_self_connected(Config& config,
                                                          const backends::MpiCommunicator& comm);

}  // namespace kolo
