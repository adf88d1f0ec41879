// The rest of the layout of a rank started by a foreign launcher: which
// ranks share its host (local rank and size, when the launcher does not
// say) and which host it is among the job's (cross rank and size, which no
// launcher gives). Every rank publishes its machine through the job's
// store; a launcher whose local ranks disagree with what the machines show
// fails the job here rather than letting it run on a wrong layout.
#pragma once

#include "core/config.h"
#include "rendezvous/store.h"

namespace kolo::launch {

// Collective over the ranks of the job: each calls it with the store scoped
// to this init. Fills config.layout's local and cross values. Throws
// InvalidArgument when the launcher's local ranks contradict the machines,
// TimeoutError when a rank never publishes. After a rendezvous through rank
// 0's MPI offer, also sets KOLO_ADDRESS in config.settings (unless the user
// set it or KOLO_IFACE) to this rank's address on the network where the
// other machines reached rank 0.
void complete_foreign_layout(rendezvous::Store& store, Config& config);

}  // namespace kolo::launch
