// A POSIX shared-memory segment (shm_open + mmap), owned RAII-style.
//
// One rank per host creates it under a fresh random name, the others open
// it by that name, and it is unlinked as soon as every rank has mapped it:
// from then on no name exists, so a crash of any or all ranks leaks nothing
// (the memory goes with the last mapping).
#pragma once

#include <cstddef>
#include <string>

namespace kolo::transport::shm {

class ShmSegment {
 public:
  // Creates a new segment of `bytes` (zero-filled) under a random name
  // starting with `prefix` ("/kolo-"). Throws Error naming the name and the
  // errno text (e.g. /dev/shm full or not mounted).
  static ShmSegment create(const std::string& prefix, size_t bytes);
  // Maps an existing segment; throws when it does not exist here (another
  // machine or another /dev/shm) or has another size.
  static ShmSegment open(const std::string& name, size_t bytes);

  ShmSegment() = default;
  ShmSegment(ShmSegment&& other) noexcept;
  ShmSegment& operator=(ShmSegment&& other) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;
  ~ShmSegment();

  // Removes the name (the mapping stays valid). Idempotent; no-op after the
  // first call or when this object did not create the segment.
  void unlink() noexcept;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }

 private:
  ShmSegment(std::string name, void* data, size_t size, bool owner)
      : name_(std::move(name)), data_(data), size_(size), owner_(owner) {}
  void release() noexcept;

  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
  bool owner_ = false;  // created it, so unlinks the name if still there
};

}  // namespace kolo::transport::shm
