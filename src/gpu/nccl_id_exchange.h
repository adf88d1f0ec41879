// Handing an NCCL unique id (ncclGetUniqueId's 128 bytes) from a
// communicator's first rank to the others through Kolo's rendezvous store,
// the way the TCP transport publishes its addresses: one key per
// communicator, written once, read by every other member with a timeout.
// Separate from the communicator's init so it is tested without NCCL.
//
// The key names the process set and the engine's init generation
// ("nccl_id/<set>/<generation>"), so an elastic restart or a re-created
// process set never reads a stale id; the store is the job's PrefixStore,
// so jobs do not meet.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>

#include "rendezvous/store.h"

namespace kolo::gpu {

// ncclUniqueId's size (NCCL_UNIQUE_ID_BYTES): the exchange refuses anything
// else, so a corrupt or foreign value never reaches ncclCommInitRank.
inline constexpr size_t kNcclUniqueIdBytes = 128;

std::string nccl_id_key(int32_t process_set, int64_t generation);

// On `rank` 0 of the communicator: `make_id()` (ncclGetUniqueId in the
// plugin), published under `key`; on the others: the value under `key`,
// waited for up to `timeout` (TimeoutError naming the key: the first rank
// never got there). Throws InvalidArgument when an id is not
// kNcclUniqueIdBytes long.
std::string exchange_nccl_id(rendezvous::Store& store, const std::string& key, int rank,
                             const std::function<std::string()>& make_id,
                             std::chrono::milliseconds timeout);

}  // namespace kolo::gpu
