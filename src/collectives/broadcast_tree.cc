#include "collectives/algorithm_util.h"

namespace kolo::collectives::detail {

// Binomial tree in ranks relative to the root (v = rank - root): v receives
// from v minus its lowest set bit, then sends to v + 2^k for every 2^k below
// that bit, largest subtree first so the deepest branch starts earliest.
void broadcast_tree(Context& ctx, Tag tag, void* data, size_t bytes, int root) {
  const int size = ctx.size();
  const int relative = wrap_rank(ctx.rank() - root, size);

  int mask = 1;
  while (mask < size) {
    if (relative & mask) {
      ctx.recv(wrap_rank(relative - mask + root, size), tag, data, bytes);
      break;
    }
    mask <<= 1;
  }

  RequestList sends;
  for (mask >>= 1; mask > 0; mask >>= 1)
    if (relative + mask < size)
      sends.add(ctx.isend(wrap_rank(relative + mask + root, size), tag, data, bytes));
  sends.wait_all();
}

}  // namespace kolo::collectives::detail
