// Process-shared futex waits on a 32-bit word in shared memory: the sleeping
// half of the shared-memory transport's "spin briefly, then sleep".
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace kolo::transport::shm {

// Sleeps while *word == expected, at most `timeout`; returns early on a wake,
// a signal or a changed value (callers re-check their condition).
void futex_wait(std::atomic<uint32_t>& word, uint32_t expected, std::chrono::microseconds timeout);
// Wakes every waiter on `word`, in any process that maps it.
void futex_wake_all(std::atomic<uint32_t>& word);

}  // namespace kolo::transport::shm
