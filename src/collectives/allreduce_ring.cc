#include <limits>

#include "collectives/algorithm_util.h"
#include "collectives/collectives.h"
#include "collectives/reduce/reduce.h"

namespace kolo::collectives::detail {
namespace {

// Chunk buffers that in-place partial sums land in; one is reduced while
// the others receive. Each is reused as soon as its chunk is reduced,
// because the result goes to the destination, not back to the slot.
constexpr size_t kChunkSlots = 4;

constexpr size_t kNoGuard = std::numeric_limits<size_t>::max();

// One chunk this rank receives, in the order it receives them.
struct IncomingChunk {
  ByteRange range;  // within the full buffer
  bool reduce;      // reduce-scatter phase (else allgather)
  bool finish;      // completes this rank's own segment: postscale it
  bool forward;     // sent on to the next rank once handled
  // An allgather chunk lands where this rank earlier sent from: the send
  // (an index into the sends, see allreduce_ring) must be done first.
  size_t guard = kNoGuard;
};

}  // namespace

// One ring pipeline for both phases. Reduce-scatter: at step s rank r
// receives the partial sum of segment (r - s - 2) from r-1, adds its own
// contribution and forwards it; at the last step the segment is its own,
// which it finishes (postscale) and sends on as the allgather's first
// step; the allgather then forwards finished segments around the ring.
// Every phase works chunk by chunk, so a chunk moves on as soon as it is
// reduced, and the allgather starts while the reduce-scatter still runs.
//
// Where partial sums land: out of place, straight in dst at their final
// place (dst's other bytes are not needed yet), so every reduce-scatter
// receive is posted up front and none takes the transport's unexpected-
// message path. In place, dst still holds this rank's contribution there,
// so they land in kChunkSlots slots and are reduced into dst. Either way
// each partial is forwarded from dst, and the finished segment later
// arrives in the same place; that allgather receive is posted only once
// the forward (or, in place, the step-0 send) has left, so the transport
// never writes a buffer it may still be reading.
void allreduce_ring(Context& ctx, Tag tag, const void* src, void* dst, size_t count, DataType dtype,
                    ReduceOp op, double postscale, size_t chunk_bytes) {
  const RingGeometry ring(ctx, count, dtype, chunk_bytes);
  const int rank = ring.rank, size = ring.size, next = ring.next, prev = ring.prev;
  const size_t element = ring.element, chunk = ring.chunk;
  auto segment = [&ring](int r) { return ring.segment(r); };
  const bool in_place = src == dst;

  // Sends are indexed like the schedule (the forward of chunk k is send
  // k), followed by the step-0 sends of this rank's own contribution.
  std::vector<IncomingChunk> schedule;
  std::vector<size_t> step_start;  // schedule index where each reduce-scatter step begins
  size_t reduce_chunks = 0;
  for (int phase = 0; phase < 2; ++phase)
    for (int step = 0; step < size - 1; ++step) {
      const bool reduce = phase == 0;
      const bool last = step == size - 2;
      if (reduce) step_start.push_back(schedule.size());
      const ByteRange seg = segment(wrap_rank(rank - step - (reduce ? 2 : 1), size));
      for (size_t c = 0; c < chunk_count(seg.length, chunk); ++c) {
        IncomingChunk item{chunk_of(seg, chunk, c), reduce, reduce && last, reduce || !last};
        if (reduce) ++reduce_chunks;
        // Allgather step s brings the segment forwarded at reduce-scatter
        // step s-1; step 0 brings the one this rank sent first.
        if (!reduce && step > 0) item.guard = step_start[step - 1] + c;
        schedule.push_back(item);
      }
    }
  const ByteRange first = segment(wrap_rank(rank - 1, size));
  const size_t first_chunks = chunk_count(first.length, chunk);
  if (in_place)
    for (size_t k = reduce_chunks; k < reduce_chunks + first_chunks; ++k)
      schedule[k].guard = schedule.size() + (k - reduce_chunks);

  // Segment 0 is the largest (shards differ by at most one element).
  const size_t slot_bytes = in_place ? std::min(chunk, segment(0).length) : 0;
  auto slots = scratch_bytes(kChunkSlots * slot_bytes);
  auto landing = [&](size_t k) {
    if (in_place && schedule[k].reduce) return slots.get() + (k % kChunkSlots) * slot_bytes;
    return at(dst, schedule[k].range.offset);
  };
  std::vector<std::unique_ptr<Request>> receives(schedule.size());
  std::vector<std::unique_ptr<Request>> sends(schedule.size() + first_chunks);

  // Receives are posted in schedule order (the order of arrival). In place,
  // a reduce-scatter receive waits for its slot; an allgather receive waits
  // for its guard, blocking only when it is the next one to complete.
  size_t posted = 0;
  auto post_receives = [&](size_t handled) {
    for (; posted < schedule.size(); ++posted) {
      const IncomingChunk& item = schedule[posted];
      if (in_place && item.reduce && posted >= handled + kChunkSlots) break;
      if (item.guard != kNoGuard) {
        auto& guard = sends[item.guard];
        if (!guard) break;  // not sent yet
        if (posted == handled)
          guard->wait();
        else if (!guard->test())
          break;
      }
      receives[posted] = ctx.irecv(prev, tag, landing(posted), item.range.length);
    }
  };
  post_receives(0);
  // Step 0 sends this rank's own contribution straight from src.
  for (size_t c = 0; c < first_chunks; ++c) {
    const ByteRange piece = chunk_of(first, chunk, c);
    sends[schedule.size() + c] = ctx.isend(next, tag, at(src, piece.offset), piece.length);
  }

  for (size_t k = 0; k < schedule.size(); ++k) {
    post_receives(k);
    receives[k]->wait();
    receives[k].reset();
    const IncomingChunk& item = schedule[k];
    std::byte* result = at(dst, item.range.offset);
    if (item.reduce) {
      const size_t elements = item.range.length / element;
      // Out of place the partial sum arrived in dst; in place dst holds the
      // contribution and the partial sum is in a slot.
      reduce::reduce_into(result, in_place ? landing(k) : at(src, item.range.offset), elements,
                          dtype, op);
      // Scaled once, by its owner, so every rank gets the owner's bits.
      if (item.finish) reduce::scale(result, elements, dtype, postscale);
    }
    if (item.forward) sends[k] = ctx.isend(next, tag, result, item.range.length);
  }
  for (auto& send : sends)
    if (send) send->wait();
}

}  // namespace kolo::collectives::detail
