#include "transport/shm/shm_segment.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <cerrno>
#include <random>
#include <utility>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/unique_fd.h"

namespace kolo::transport::shm {
namespace {

std::string random_suffix() {
  std::random_device device;
  return fmt::format("{:08x}{:08x}", device(), device());
}

[[noreturn]] void fail(const std::string& what, const std::string& name, int err) {
  throw IoError(fmt::format("shared memory {} {}: {}", what, name, errno_text(err)));
}

// The caller may close `fd` afterwards: the mapping keeps the memory.
void* map_fd(const UniqueFd& fd, size_t bytes, const std::string& name) {
  void* data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
  if (data == MAP_FAILED) fail("mmap of", name, errno);
  return data;
}

}  // namespace

ShmSegment ShmSegment::create(const std::string& prefix, size_t bytes) {
  for (int attempt = 0;; ++attempt) {
    std::string name = prefix + random_suffix();
    UniqueFd fd(::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600));
    if (!fd.valid()) {
      if (errno == EEXIST && attempt < 8) continue;
      fail("shm_open", name, errno);
    }
    // ftruncate reserves nothing; fallocate makes "/dev/shm is full" an
    // error here instead of a SIGBUS on first touch in the middle of a step.
    int err = ::posix_fallocate(fd.get(), 0, static_cast<off_t>(bytes));
    if (err != 0) {
      ::shm_unlink(name.c_str());
      fail(fmt::format("posix_fallocate({} bytes) of", bytes), name, err);
    }
    void* data = nullptr;
    try {
      data = map_fd(fd, bytes, name);
    } catch (...) {
      ::shm_unlink(name.c_str());
      throw;
    }
    return ShmSegment(std::move(name), data, bytes, true);
  }
}

ShmSegment ShmSegment::open(const std::string& name, size_t bytes) {
  UniqueFd fd(::shm_open(name.c_str(), O_RDWR, 0600));
  if (!fd.valid()) fail("shm_open", name, errno);
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    throw IoError(fmt::format("shared memory {} has {} bytes, expected {}", name,
                              static_cast<long long>(st.st_size), bytes));
  }
  return ShmSegment(name, map_fd(fd, bytes, name), bytes, false);
}

ShmSegment::ShmSegment(ShmSegment&& other) noexcept
    : name_(std::move(other.name_)),
      data_(std::exchange(other.data_, nullptr)),
      size_(std::exchange(other.size_, 0)),
      owner_(std::exchange(other.owner_, false)) {}

ShmSegment& ShmSegment::operator=(ShmSegment&& other) noexcept {
  if (this != &other) {
    release();
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
    owner_ = std::exchange(other.owner_, false);
  }
  return *this;
}

ShmSegment::~ShmSegment() {
  release();
}

void ShmSegment::unlink() noexcept {
  if (owner_) ::shm_unlink(name_.c_str());
  owner_ = false;
}

void ShmSegment::release() noexcept {
  unlink();
  if (data_ != nullptr) ::munmap(data_, size_);
  data_ = nullptr;
}

}  // namespace kolo::transport::shm
