// Small helpers shared by the algorithm files: request bookkeeping, chunking
// and rank arithmetic.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "collectives/algorithms.h"
#include "collectives/collectives.h"

namespace kolo::collectives::detail {

using transport::Request;

// Requests in flight, waited for together. Declare a RequestList after the
// buffers its requests use: if an exception unwinds the algorithm, the
// requests are destroyed (cancelled or finished by the transport) before
// their buffers are freed.
class RequestList {
 public:
  void add(std::unique_ptr<Request> request) { requests_.push_back(std::move(request)); }
  void wait_all() {
    for (auto& request : requests_) request->wait();
    requests_.clear();
  }

 private:
  std::vector<std::unique_ptr<Request>> requests_;
};

// Uninitialized scratch memory; every byte is written before it is read.
inline std::unique_ptr<std::byte[]> scratch_bytes(size_t bytes) {
  return std::make_unique_for_overwrite<std::byte[]>(bytes);
}

inline size_t chunk_count(size_t length, size_t chunk) {
  return (length + chunk - 1) / chunk;
}

// Chunk `index` of `segment`, cut every `chunk` units from its start; the
// sender and the receiver of a segment cut it identically, which matters
// because a receive must match the size of its message exactly.
inline ByteRange chunk_of(const ByteRange& segment, size_t chunk, size_t index) {
  size_t begin = index * chunk;
  return {segment.offset + begin, std::min(chunk, segment.length - begin)};
}

// r mod size for r in (-size, 2*size).
inline int wrap_rank(int r, int size) {
  return ((r % size) + size) % size;
}

// Where this rank sits in a ring over `count` elements of one dtype, and
// how the buffer is cut: segment r is rank r's reduce-scatter shard, and
// chunks are whole elements of about chunk_bytes.
struct RingGeometry {
  RingGeometry(const Context& ctx, size_t count, DataType dtype, size_t chunk_bytes)
      : rank(ctx.rank()),
        size(ctx.size()),
        next(wrap_rank(rank + 1, size)),
        prev(wrap_rank(rank - 1, size)),
        element(dtype_size(dtype)),
        chunk(std::max<size_t>(1, chunk_bytes / element) * element),
        count_(count) {}

  ByteRange segment(int r) const {
    return {reduce_scatter_offset(count_, size, r) * element,
            reduce_scatter_count(count_, size, r) * element};
  }

  const int rank, size, next, prev;
  const size_t element, chunk;

 private:
  size_t count_;
};

// One past the last byte of any block.
inline size_t extent(const std::vector<ByteRange>& blocks) {
  size_t end = 0;
  for (const ByteRange& b : blocks) end = std::max(end, b.offset + b.length);
  return end;
}

// Whether [a, a + a_bytes) and [b, b + b_bytes) share a byte.
inline bool ranges_overlap(const void* a, size_t a_bytes, const void* b, size_t b_bytes) {
  const auto pa = reinterpret_cast<uintptr_t>(a);
  const auto pb = reinterpret_cast<uintptr_t>(b);
  return a_bytes > 0 && b_bytes > 0 && pa < pb + b_bytes && pb < pa + a_bytes;
}

// For an alltoallv whose send and recv blocks overlap (in place, or any
// overlap): blocks of recv would be overwritten while other blocks of send
// are still to go, so it returns a copy of the send side to send from.
// Null when they do not overlap.
inline std::unique_ptr<std::byte[]> copy_if_overlapping(const void* send,
                                                        const std::vector<ByteRange>& send_blocks,
                                                        const void* recv,
                                                        const std::vector<ByteRange>& recv_blocks) {
  const size_t send_bytes = extent(send_blocks);
  if (!ranges_overlap(send, send_bytes, recv, extent(recv_blocks))) return nullptr;
  auto copy = scratch_bytes(send_bytes);
  std::memcpy(copy.get(), send, send_bytes);
  return copy;
}

inline std::byte* at(void* base, size_t offset) {
  return static_cast<std::byte*>(base) + offset;
}
inline const std::byte* at(const void* base, size_t offset) {
  return static_cast<const std::byte*>(base) + offset;
}

}  // namespace kolo::collectives::detail
