// Copies for data that leaves the cache anyway: the shared-memory rounds
// write every output byte once, and for large messages (from the group's
// streaming_bytes()) that output goes to memory. Ordinary stores
// first read each destination line (read for ownership), a third of the
// memory traffic of an allreduce round; non-temporal stores write whole
// lines without reading them.
#pragma once

#include <cstddef>

namespace kolo::collectives::shm {

// memcpy semantics (no overlap). Ends with a store fence, so the data is
// ordered before whatever the caller publishes next.
void stream_copy(void* dst, const void* src, size_t bytes);

}  // namespace kolo::collectives::shm
