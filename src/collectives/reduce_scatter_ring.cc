#include <algorithm>
#include <array>

#include "collectives/algorithm_util.h"
#include "collectives/collectives.h"
#include "collectives/reduce/reduce.h"

namespace kolo::collectives::detail {
namespace {

// Chunk buffers a rank cycles through: one is being reduced while the
// others receive. Each is reused only after the send forwarding its
// previous contents has completed.
constexpr size_t kChunkSlots = 4;

// One chunk this rank receives, in the order it receives them.
struct IncomingChunk {
  ByteRange range;  // within the full buffer
  bool final_step;  // completes this rank's shard instead of being forwarded
};

}  // namespace

// At step s (0 <= s < size-1) rank r sends segment (r - s - 1) to r+1 and
// receives segment (r - s - 2) from r-1, adds its own contribution and
// forwards the partial result at step s+1. At the last step it receives
// segment r, which then holds every rank's contribution. Segments are cut
// into chunks, and a chunk is forwarded as soon as it is reduced, so the
// ring streams chunk by chunk instead of waiting for whole segments.
void reduce_scatter_ring(Context& ctx, Tag tag, const void* src, void* shard_out, size_t count,
                         DataType dtype, ReduceOp op, size_t chunk_bytes) {
  const RingGeometry ring(ctx, count, dtype, chunk_bytes);
  const int rank = ring.rank, size = ring.size, next = ring.next, prev = ring.prev;
  const size_t element = ring.element, chunk = ring.chunk;
  auto segment = [&ring](int r) { return ring.segment(r); };
  const ByteRange own = segment(rank);

  std::vector<IncomingChunk> schedule;
  for (int step = 0; step < size - 1; ++step) {
    const ByteRange seg = segment(wrap_rank(rank - step - 2, size));
    for (size_t c = 0; c < chunk_count(seg.length, chunk); ++c)
      schedule.push_back({chunk_of(seg, chunk, c), step == size - 2});
  }

  // Segment 0 is the largest (shards differ by at most one element).
  const size_t slot_bytes = std::min(chunk, segment(0).length);
  auto slots = scratch_bytes(kChunkSlots * slot_bytes);
  auto slot = [&](size_t k) { return slots.get() + (k % kChunkSlots) * slot_bytes; };
  std::array<std::unique_ptr<Request>, kChunkSlots> receives;
  std::array<std::unique_ptr<Request>, kChunkSlots> forwards;
  RequestList first_sends;

  auto post_receive = [&](size_t k) {
    if (k >= schedule.size()) return;
    auto& forward = forwards[k % kChunkSlots];
    if (forward) {
      forward->wait();
      forward.reset();
    }
    receives[k % kChunkSlots] = ctx.irecv(prev, tag, slot(k), schedule[k].range.length);
  };

  for (size_t k = 0; k + 1 < kChunkSlots; ++k) post_receive(k);
  // Step 0 sends this rank's own contribution straight from src.
  const ByteRange first = segment(wrap_rank(rank - 1, size));
  for (size_t c = 0; c < chunk_count(first.length, chunk); ++c) {
    const ByteRange piece = chunk_of(first, chunk, c);
    first_sends.add(ctx.isend(next, tag, at(src, piece.offset), piece.length));
  }

  for (size_t k = 0; k < schedule.size(); ++k) {
    // Keep kChunkSlots-1 receives ahead; the slot reused here was forwarded
    // one iteration ago, which gives that send time to finish.
    post_receive(k + kChunkSlots - 1);
    auto& received = receives[k % kChunkSlots];
    received->wait();
    received.reset();

    const IncomingChunk& item = schedule[k];
    const size_t elements = item.range.length / element;
    if (item.final_step) {
      reduce::reduce(at(shard_out, item.range.offset - own.offset), at(src, item.range.offset),
                     slot(k), elements, dtype, op);
    } else {
      reduce::reduce_into(slot(k), at(src, item.range.offset), elements, dtype, op);
      forwards[k % kChunkSlots] = ctx.isend(next, tag, slot(k), item.range.length);
    }
  }

  for (auto& forward : forwards)
    if (forward) forward->wait();
  first_sends.wait_all();
}

}  // namespace kolo::collectives::detail
