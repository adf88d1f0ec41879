#include "transport/shm/futex.h"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <climits>

namespace kolo::transport::shm {
namespace {

// std::atomic<uint32_t> is a plain 32-bit word (checked below), which is
// what the kernel compares and sleeps on.
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));
static_assert(std::atomic<uint32_t>::is_always_lock_free);

uint32_t* raw(std::atomic<uint32_t>& word) {
  return reinterpret_cast<uint32_t*>(&word);
}

}  // namespace

void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::microseconds timeout) {
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(timeout.count() / 1'000'000);
  ts.tv_nsec = static_cast<long>(timeout.count() % 1'000'000) * 1000;
  // Not FUTEX_PRIVATE_FLAG: the word is in a MAP_SHARED segment that other
  // processes wait on too. EAGAIN (value already changed), EINTR and
  // ETIMEDOUT all mean "look again", which the caller does.
  ::syscall(SYS_futex, raw(word), FUTEX_WAIT, expected, &ts, nullptr, 0);
}

void futex_wake_all(std::atomic<uint32_t>& word) {
  ::syscall(SYS_futex, raw(word), FUTEX_WAKE, INT_MAX, nullptr, nullptr, 0);
}

}  // namespace kolo::transport::shm
