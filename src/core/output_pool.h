// OutputPool: the engine's cache of output memory. Outputs the engine
// allocates (allgather, alltoall, reducescatter) and the out-of-place
// outputs the bindings ask for (kolo.torch's and kolo.numpy's
// `out = allreduce(t)`) come from here. A freed output goes back to a free
// list bucketed by size class, and the next output of that class takes it:
// its pages are already mapped, where a fresh 64 MB block from malloc
// (mmap) faults in and zeroes 16384 pages, which costs 3x the allreduce.
//
// A block is handed out again only after its OutputBlock is destroyed, that
// is when nobody holds the output any more (a framework tensor over it keeps
// it), so reuse never aliases memory a caller still reads. The free lists
// hold at most `limit_bytes` (KOLO_OUTPUT_CACHE); close() (engine shutdown)
// frees them, and blocks that come back later are freed at once. Blocks hold
// the pool by shared_ptr, so an output may outlive its engine.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <vector>

#include "common/thread_annotations.h"

namespace kolo::core {

class OutputPool;

// One output buffer of `size()` bytes (64-byte aligned); move-only, returns
// its memory to the pool when destroyed. Empty (nullptr, 0) for 0 bytes.
class OutputBlock {
 public:
  OutputBlock() = default;
  ~OutputBlock();
  OutputBlock(OutputBlock&& other) noexcept;
  OutputBlock& operator=(OutputBlock&& other) noexcept;
  OutputBlock(const OutputBlock&) = delete;
  OutputBlock& operator=(const OutputBlock&) = delete;

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }

 private:
  friend class OutputPool;
  OutputBlock(std::shared_ptr<OutputPool> pool, std::byte* data, size_t size, size_t capacity)
      : pool_(std::move(pool)), data_(data), size_(size), capacity_(capacity) {}
  void reset() noexcept;

  std::shared_ptr<OutputPool> pool_;
  std::byte* data_ = nullptr;
  size_t size_ = 0;
  size_t capacity_ = 0;  // the size class actually allocated
};

struct OutputPoolStats {
  size_t cached_bytes = 0;  // in the free lists (size classes)
  size_t cached_blocks = 0;
  uint64_t reused = 0;     // acquires served from a free list
  uint64_t allocated = 0;  // acquires that allocated fresh memory
};

class OutputPool : public std::enable_shared_from_this<OutputPool> {
 public:
  // Use make_shared: blocks keep the pool alive through shared_from_this.
  explicit OutputPool(size_t limit_bytes) : limit_(limit_bytes) {}
  ~OutputPool();
  OutputPool(const OutputPool&) = delete;
  OutputPool& operator=(const OutputPool&) = delete;

  // A block of at least `bytes` (uninitialised), from the free list of its
  // size class when one is there.
  OutputBlock acquire(size_t bytes) KOLO_EXCLUDES(mutex_);
  // Frees the free lists; blocks still out are freed when they come back.
  void close() KOLO_EXCLUDES(mutex_);
  OutputPoolStats stats() const KOLO_EXCLUDES(mutex_);
  size_t limit() const { return limit_; }

  // The bytes a request of `bytes` occupies: 64 for up to 64, above that the
  // next multiple of a quarter of the power of two below it (at most 25%
  // more than asked; untouched tail pages of large blocks are never mapped).
  static size_t size_class(size_t bytes);

 private:
  friend class OutputBlock;
  void give_back(std::byte* data, size_t capacity) noexcept KOLO_EXCLUDES(mutex_);

  const size_t limit_;
  mutable Mutex mutex_;
  // Size class -> free blocks of it, most recently returned last (reused
  // first: its pages are the likeliest to be in the cache).
  std::map<size_t, std::vector<std::byte*>> free_ KOLO_GUARDED_BY(mutex_);
  OutputPoolStats stats_ KOLO_GUARDED_BY(mutex_);
  bool closed_ KOLO_GUARDED_BY(mutex_) = false;
};

}  // namespace kolo::core
