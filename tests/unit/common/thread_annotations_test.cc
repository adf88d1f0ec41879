// The annotated Mutex, MutexLock and CondVar behave like std::mutex,
// std::unique_lock and std::condition_variable.
#include "common/thread_annotations.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace kolo {
namespace {

using std::chrono::milliseconds;
using std::chrono::steady_clock;

// Whether another thread could take `mutex` now.
bool free_for_others(Mutex& mutex) {
  bool taken = false;
  std::thread([&] {
    if (mutex.try_lock()) {
      taken = true;
      mutex.unlock();
    }
  }).join();
  return taken;
}

TEST(MutexLock, ReleasesAtScopeEndAndWhenUnlocked) {
  Mutex mutex;
  {
    MutexLock lock(mutex);
    EXPECT_FALSE(free_for_others(mutex));
    lock.unlock();
    EXPECT_TRUE(free_for_others(mutex));
    lock.lock();
    EXPECT_FALSE(free_for_others(mutex));
  }
  EXPECT_TRUE(free_for_others(mutex));
}

TEST(MutexLock, AdoptsAMutexTakenWithTryLock) {
  Mutex mutex;
  if (mutex.try_lock()) {
    MutexLock adopted(mutex, std::adopt_lock);
    EXPECT_FALSE(free_for_others(mutex));
  } else {
    ADD_FAILURE() << "a free mutex refused try_lock";
  }
  EXPECT_TRUE(free_for_others(mutex));
}

TEST(CondVar, WaitUntilTimesOutHoldingTheMutex) {
  Mutex mutex;
  CondVar cv;
  MutexLock lock(mutex);
  const auto start = steady_clock::now();
  EXPECT_FALSE(cv.wait_until(mutex, start + milliseconds(20)));
  EXPECT_GE(steady_clock::now() - start, milliseconds(20));
  EXPECT_FALSE(free_for_others(mutex));
}

TEST(CondVar, NotifyWakesAWaiter) {
  Mutex mutex;
  CondVar cv;
  bool ready = false;  // guarded by mutex
  std::thread notifier([&] {
    std::this_thread::sleep_for(milliseconds(10));
    MutexLock lock(mutex);
    ready = true;
    cv.notify_all();
  });
  {
    MutexLock lock(mutex);
    const auto deadline = steady_clock::now() + std::chrono::seconds(30);
    while (!ready && cv.wait_until(mutex, deadline)) {
    }
    EXPECT_TRUE(ready);
    EXPECT_LT(steady_clock::now(), deadline);
  }
  notifier.join();
}

TEST(LockedBy, GivesTheValueToTheMutexHolder) {
  Mutex mutex;
  LockedBy<int> counter;
  MutexLock lock(mutex);
  counter.under(mutex) = 41;
  ++counter.under(mutex);
  EXPECT_EQ(counter.under(mutex), 42);
}

}  // namespace
}  // namespace kolo
