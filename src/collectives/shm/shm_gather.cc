// Shared-memory allgather and broadcast (see shm_collectives.h): data moves
// through the slots one slot-sized window per round, in two phases: the
// owners copy in, advance, and the others copy out once the owners reached
// that phase.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "collectives/shm/shm_collectives.h"
#include "collectives/shm/shm_internal.h"

namespace kolo::collectives::shm {
namespace {

using internal::guarded;


size_t total_length(const std::vector<ByteRange>& ranges) {
  return std::accumulate(ranges.begin(), ranges.end(), size_t{0},
                         [](size_t sum, const ByteRange& r) { return sum + r.length; });
}

// Calls fn(data_offset, window_offset, length) for the parts of `ranges`,
// read as one stream, that fall into [begin, begin + length).
template <typename Fn>
void for_window(const std::vector<ByteRange>& ranges, size_t begin, size_t length, Fn&& fn) {
  size_t stream = 0;
  const size_t end = begin + length;
  for (const ByteRange& r : ranges) {
    const size_t lo = std::max(stream, begin);
    const size_t hi = std::min(stream + r.length, end);
    if (lo < hi) fn(r.offset + (lo - stream), lo - begin, hi - lo);
    stream += r.length;
    if (stream >= end) break;
  }
}

// About eight chunks per window's worth of message, none under 16 KiB (a
// phase costs a cache-line hand-off; smaller chunks would not pay for it),
// nor under a quarter of the window, so tests with tiny slots still cut
// windows into chunks.
size_t broadcast_chunk_bytes(size_t message_in_window, size_t window) {
  constexpr size_t kMinChunk = size_t{16} << 10;
  const size_t least = std::min(kMinChunk, std::max<size_t>(window / 4, 1));
  const size_t chunk = std::max(message_in_window / 8, least);
  return std::min(window, (chunk + 63) / 64 * 64);
}

}  // namespace

void allgather(ShmGroup& group, void* data, const std::vector<std::vector<ByteRange>>& pieces) {
  const int n = group.size();
  const int r = group.rank();
  auto* base = static_cast<std::byte*>(data);
  size_t longest = 0;
  for (const auto& ranges : pieces) longest = std::max(longest, total_length(ranges));
  if (longest == 0) return;
  const size_t window = group.slot_bytes();
  guarded(group, [&] {
    for (size_t k = 0; k * window < longest; ++k) {
      const int buffer = group.next_buffer();
      group.acquire_slot(buffer);
      std::byte* mine = group.slot(r, buffer);
      for_window(pieces[r], k * window, window,
                 [&](size_t at, size_t in_window, size_t len) { std::memcpy(mine + in_window, base + at, len); });
      group.wait_all(group.advance());
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        const std::byte* theirs = group.slot(q, buffer);
        for_window(pieces[q], k * window, window,
                   [&](size_t at, size_t in_window, size_t len) { std::memcpy(base + at, theirs + in_window, len); });
      }
      group.retire_slot(buffer);
    }
  });
}

// The root copies each window into its slot in chunks and publishes each
// chunk as it lands, so the others copy chunk c out while the root copies
// c + 1 in: about one copy's time instead of two in a row. Every member
// advances once per chunk (the values stay in step across members).
void broadcast(ShmGroup& group, void* data, size_t bytes, int root) {
  if (bytes == 0) return;
  auto* base = static_cast<std::byte*>(data);
  const size_t window = group.slot_bytes();
  const size_t chunk = broadcast_chunk_bytes(std::min(bytes, window), window);
  guarded(group, [&] {
    for (size_t begin = 0; begin < bytes; begin += window) {
      const int buffer = group.next_buffer();
      const size_t length = std::min(window, bytes - begin);
      std::byte* slot = group.slot(root, buffer);
      if (group.rank() == root) group.acquire_slot(buffer);
      for (size_t at = 0; at < length; at += chunk) {
        const size_t n = std::min(chunk, length - at);
        if (group.rank() == root) {
          std::memcpy(slot + at, base + begin + at, n);
          group.advance();
        } else {
          group.wait_member(root, group.advance());
          std::memcpy(base + begin + at, slot + at, n);
        }
      }
      group.retire_slot(buffer);
    }
  });
}

void barrier(ShmGroup& group) {
  guarded(group, [&] { group.wait_all(group.advance()); });
}

}  // namespace kolo::collectives::shm
