#include <algorithm>
#include <cstdint>
#include <cstring>

#include "collectives/algorithm_util.h"

namespace kolo::collectives::detail {

// Pairwise exchange: at step i (1 <= i < size) rank r sends to r+i and
// receives from r-i, so at every step each rank has exactly one destination
// and one source and no rank is flooded by everyone at once. All receives
// are posted first (each has its own place in recv); sends are issued in
// step order and the transport drains them in that order per peer.
void alltoallv_pairwise(Context& ctx, Tag tag, const void* send,
                        const std::vector<ByteRange>& send_blocks, void* recv,
                        const std::vector<ByteRange>& recv_blocks) {
  const int rank = ctx.rank();
  const int size = ctx.size();

  // In place (or any overlap): blocks of recv are overwritten while other
  // blocks of send are still to be sent, so send from a copy.
  std::unique_ptr<std::byte[]> send_copy =
      copy_if_overlapping(send, send_blocks, recv, recv_blocks);
  if (send_copy) send = send_copy.get();

  RequestList receives;
  for (int step = 1; step < size; ++step) {
    const int from = wrap_rank(rank - step, size);
    const ByteRange& block = recv_blocks[from];
    if (block.length > 0) receives.add(ctx.irecv(from, tag, at(recv, block.offset), block.length));
  }

  RequestList sends;
  for (int step = 1; step < size; ++step) {
    const int to = wrap_rank(rank + step, size);
    const ByteRange& block = send_blocks[to];
    if (block.length > 0) sends.add(ctx.isend(to, tag, at(send, block.offset), block.length));
  }

  const ByteRange& own_in = send_blocks[rank];
  if (own_in.length > 0)
    std::memcpy(at(recv, recv_blocks[rank].offset), at(send, own_in.offset), own_in.length);

  receives.wait_all();
  sends.wait_all();
}

}  // namespace kolo::collectives::detail
