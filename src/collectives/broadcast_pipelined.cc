#include "collectives/algorithm_util.h"

namespace kolo::collectives::detail {

// A chain in ranks relative to the root. Once the pipeline fills, every link
// carries a different chunk at the same time, so a large message costs about
// bytes/bandwidth plus (size - 2) chunk times, instead of the tree's
// log2(size) full transfers.
void broadcast_pipelined(Context& ctx, Tag tag, void* data, size_t bytes, int root,
                         size_t chunk_bytes) {
  const int size = ctx.size();
  const int rank = ctx.rank();
  const int relative = wrap_rank(rank - root, size);
  const bool has_prev = relative > 0;
  const bool has_next = relative + 1 < size;
  const size_t chunk = std::max<size_t>(1, chunk_bytes);
  const size_t chunks = chunk_count(bytes, chunk);
  const ByteRange whole{0, bytes};

  // Every chunk lands in its final place, so all receives go up front.
  std::vector<std::unique_ptr<Request>> receives;
  if (has_prev) {
    receives.reserve(chunks);
    for (size_t c = 0; c < chunks; ++c) {
      const ByteRange piece = chunk_of(whole, chunk, c);
      receives.push_back(
          ctx.irecv(wrap_rank(rank - 1, size), tag, at(data, piece.offset), piece.length));
    }
  }
  RequestList sends;
  for (size_t c = 0; c < chunks; ++c) {
    if (has_prev) receives[c]->wait();
    if (has_next) {
      const ByteRange piece = chunk_of(whole, chunk, c);
      sends.add(ctx.isend(wrap_rank(rank + 1, size), tag, at(data, piece.offset), piece.length));
    }
  }
  sends.wait_all();
}

}  // namespace kolo::collectives::detail
