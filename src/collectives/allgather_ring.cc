#include "collectives/algorithm_util.h"

namespace kolo::collectives::detail {

// At step s rank r sends segment (r - s) to r+1 and receives segment
// (r - s - 1) from r-1, which it forwards at step s+1. Every receive lands in
// its final place, so all of them are posted up front; chunks are forwarded
// as they arrive, which pipelines the steps.
void allgather_ring(Context& ctx, Tag tag, void* data, const std::vector<ByteRange>& segments,
                    size_t chunk_bytes) {
  const int rank = ctx.rank();
  const int size = ctx.size();
  const int next = wrap_rank(rank + 1, size);
  const int prev = wrap_rank(rank - 1, size);
  const size_t chunk = std::max<size_t>(1, chunk_bytes);

  std::vector<ByteRange> incoming;  // chunks in arrival order
  std::vector<bool> forward;
  for (int step = 0; step < size - 1; ++step) {
    const ByteRange& seg = segments[wrap_rank(rank - step - 1, size)];
    for (size_t c = 0; c < chunk_count(seg.length, chunk); ++c) {
      incoming.push_back(chunk_of(seg, chunk, c));
      forward.push_back(step < size - 2);
    }
  }

  std::vector<std::unique_ptr<Request>> receives;
  receives.reserve(incoming.size());
  for (const ByteRange& piece : incoming)
    receives.push_back(ctx.irecv(prev, tag, at(data, piece.offset), piece.length));

  RequestList sends;
  const ByteRange& own = segments[rank];
  for (size_t c = 0; c < chunk_count(own.length, chunk); ++c) {
    const ByteRange piece = chunk_of(own, chunk, c);
    sends.add(ctx.isend(next, tag, at(data, piece.offset), piece.length));
  }
  for (size_t k = 0; k < incoming.size(); ++k) {
    receives[k]->wait();
    if (forward[k])
      sends.add(ctx.isend(next, tag, at(data, incoming[k].offset), incoming[k].length));
  }
  sends.wait_all();
}

}  // namespace kolo::collectives::detail
