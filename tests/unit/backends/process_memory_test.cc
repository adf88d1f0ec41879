// Direct reads of another process's memory: a forked child's copy of a
// buffer reads back byte for byte, and each way it can fail says so (gone,
// unmapped address, a different value at the probed word).
#include "transport/shm/process_memory.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <vector>

namespace kolo::testing {
namespace {

using transport::shm::can_read_process_memory;
using transport::shm::read_process_memory;

// A child that keeps the parent's memory image (fork) until told to exit.
class Child {
 public:
  Child() {
    EXPECT_EQ(::pipe(pipe_), 0);
    pid_ = ::fork();
    if (pid_ == 0) {
      char c;
      (void)!::read(pipe_[0], &c, 1);
      ::_exit(0);
    }
  }
  ~Child() { stop(); }
  void stop() {
    if (pid_ <= 0) return;
    (void)!::write(pipe_[1], "x", 1);
    ::waitpid(pid_, nullptr, 0);
    stopped_ = pid_;
    pid_ = -1;
  }
  pid_t pid() const { return pid_; }
  pid_t stopped() const { return stopped_; }

 private:
  int pipe_[2] = {-1, -1};
  pid_t pid_ = -1;
  pid_t stopped_ = -1;
};

TEST(ProcessMemoryTest, ReadsAChildsCopyOfABuffer) {
  std::vector<unsigned char> source(3 * 4096 + 123);
  for (size_t i = 0; i < source.size(); ++i) source[i] = static_cast<unsigned char>(i * 7 + 1);
  const auto remote = reinterpret_cast<uintptr_t>(source.data());
  Child child;
  std::fill(source.begin(), source.end(), 0);  // ours changes, the child's copy does not
  std::vector<unsigned char> got(source.size() - 10);
  ASSERT_EQ(read_process_memory(child.pid(), remote + 10, got.data(), got.size()), 0);
  for (size_t i = 0; i < got.size(); ++i)
    ASSERT_EQ(got[i], static_cast<unsigned char>((i + 10) * 7 + 1)) << i;
}

TEST(ProcessMemoryTest, ProbeChecksTheValue) {
  const uint64_t word = 0x1234abcd5678ef90ULL;
  const auto address = reinterpret_cast<uintptr_t>(&word);
  Child child;
  EXPECT_TRUE(can_read_process_memory(child.pid(), address, word));
  EXPECT_FALSE(can_read_process_memory(child.pid(), address, word + 1));
  EXPECT_TRUE(can_read_process_memory(::getpid(), address, word));
}

TEST(ProcessMemoryTest, FailuresSayWhy) {
  // An address mapped nowhere: a reserved, then released page.
  void* page = ::mmap(nullptr, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(page, MAP_FAILED);
  ::munmap(page, 4096);
  char buffer[64];
  EXPECT_EQ(
      read_process_memory(::getpid(), reinterpret_cast<uintptr_t>(page), buffer, sizeof buffer),
      EFAULT);

  const uint64_t word = 42;
  Child child;
  child.stop();  // reaped: the pid names no process now (until reused, which takes a while)
  EXPECT_EQ(read_process_memory(child.stopped(), reinterpret_cast<uintptr_t>(&word), buffer, 8),
            ESRCH);
  EXPECT_FALSE(can_read_process_memory(child.stopped(), reinterpret_cast<uintptr_t>(&word), word));
}

}  // namespace
}  // namespace kolo::testing
