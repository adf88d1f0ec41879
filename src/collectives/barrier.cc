#include <cstdint>

#include "collectives/algorithm_util.h"

namespace kolo::collectives::detail {

// Dissemination: in round k rank r signals r + 2^k and waits for r - 2^k.
// After ceil(log2(size)) rounds every rank has heard, directly or through
// others, from every rank, and no rank acts as a bottleneck.
void barrier_dissemination(Context& ctx, Tag tag) {
  const int rank = ctx.rank();
  const int size = ctx.size();
  const uint8_t token = 1;
  for (int distance = 1; distance < size; distance <<= 1) {
    uint8_t incoming = 0;
    auto received = ctx.irecv(wrap_rank(rank - distance, size), tag, &incoming, 1);
    auto sent = ctx.isend(wrap_rank(rank + distance, size), tag, &token, 1);
    sent->wait();
    received->wait();
  }
}

}  // namespace kolo::collectives::detail
