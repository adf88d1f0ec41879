#include "core/output_pool.h"

#include <bit>
#include <new>
#include <utility>

namespace kolo::core {
namespace {

// Cache-line alignment: what torch's CPU allocator gives, and what the
// reduction kernels' vector loads like.
constexpr std::align_val_t kAlignment{64};
constexpr size_t kSmallestClass = 64;

std::byte* allocate(size_t capacity) {
  return static_cast<std::byte*>(::operator new(capacity, kAlignment));
}

void deallocate(std::byte* data) noexcept {
  ::operator delete(data, kAlignment);
}

}  // namespace

// --- OutputBlock -----------------------------------------------------------

OutputBlock::~OutputBlock() {
  reset();
}

OutputBlock::OutputBlock(OutputBlock&& other) noexcept
    : pool_(std::move(other.pool_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      capacity_(std::exchange(other.capacity_, 0)) {}

OutputBlock& OutputBlock::operator=(OutputBlock&& other) noexcept {
  if (this != &other) {
    reset();
    pool_ = std::move(other.pool_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    capacity_ = std::exchange(other.capacity_, 0);
  }
  return *this;
}

void OutputBlock::reset() noexcept {
  if (data_ != nullptr) pool_->give_back(data_, capacity_);
  pool_.reset();
  data_ = nullptr;
  size_ = 0;
  capacity_ = 0;
}

// --- OutputPool ------------------------------------------------------------

OutputPool::~OutputPool() {
  close();
}

size_t OutputPool::size_class(size_t bytes) {
  if (bytes <= kSmallestClass) return kSmallestClass;
  const size_t step = std::bit_floor(bytes - 1) / 4;
  return (bytes + step - 1) / step * step;
}

OutputBlock OutputPool::acquire(size_t bytes) {
  if (bytes == 0) return {};
  const size_t capacity = size_class(bytes);
  {
    MutexLock lock(mutex_);
    auto it = free_.find(capacity);
    if (it != free_.end()) {
      std::byte* data = it->second.back();
      it->second.pop_back();
      if (it->second.empty()) free_.erase(it);
      stats_.cached_bytes -= capacity;
      --stats_.cached_blocks;
      ++stats_.reused;
      return OutputBlock(shared_from_this(), data, bytes, capacity);
    }
    ++stats_.allocated;
  }
  // Outside the lock: a large allocation maps memory.
  return OutputBlock(shared_from_this(), allocate(capacity), bytes, capacity);
}

void OutputPool::give_back(std::byte* data, size_t capacity) noexcept {
  std::vector<std::byte*> evicted;
  {
    MutexLock lock(mutex_);
    if (!closed_ && capacity <= limit_) {
      // Room for the block that just came back (the one a loop asks for
      // next) by dropping blocks of the largest classes first.
      while (stats_.cached_bytes + capacity > limit_) {
        auto largest = std::prev(free_.end());
        evicted.push_back(largest->second.back());
        largest->second.pop_back();
        stats_.cached_bytes -= largest->first;
        --stats_.cached_blocks;
        if (largest->second.empty()) free_.erase(largest);
      }
      // Growing a free list may throw; the block is then freed instead
      // (this runs in destructors, so nothing may escape).
      try {
        free_[capacity].push_back(data);
        stats_.cached_bytes += capacity;
        ++stats_.cached_blocks;
        data = nullptr;
      } catch (const std::bad_alloc&) {
      }
    }
  }
  for (std::byte* block : evicted) deallocate(block);
  if (data != nullptr) deallocate(data);
}

void OutputPool::close() {
  std::map<size_t, std::vector<std::byte*>> cached;
  {
    MutexLock lock(mutex_);
    closed_ = true;
    cached.swap(free_);
    stats_.cached_bytes = 0;
    stats_.cached_blocks = 0;
  }
  for (auto& [capacity, blocks] : cached) {
    for (std::byte* block : blocks) deallocate(block);
  }
}

OutputPoolStats OutputPool::stats() const {
  MutexLock lock(mutex_);
  return stats_;
}

}  // namespace kolo::core
