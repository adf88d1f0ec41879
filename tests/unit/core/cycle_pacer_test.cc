// CyclePacer on its own (core/cycle_pacer.h): which enqueues and waiting
// callers start the next cycle early, and which the cycle that took the
// queue already answered. Cycle times are long (settle time = a tenth), so
// "at once" and "after the settle time" differ by far more than a loaded
// host's scheduling delays.
#include "core/cycle_pacer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <thread>

namespace kolo::core {
namespace {

using Clock = CyclePacer::Clock;
using std::chrono::milliseconds;

// How long wait_for_cycle(now + deadline) took.
Clock::duration wait_with_deadline(CyclePacer& pacer, milliseconds deadline) {
  const auto start = Clock::now();
  pacer.wait_for_cycle(start + deadline);
  return Clock::now() - start;
}

TEST(CyclePacer, AWaitingCallerAfterAnEnqueueStartsTheCycleAtOnce) {
  CyclePacer pacer(milliseconds(20000));  // settle time 2 s
  pacer.note_queue_taken();
  EXPECT_TRUE(pacer.note_enqueue());
  pacer.note_caller_waits();
  EXPECT_LT(wait_with_deadline(pacer, milliseconds(10000)), milliseconds(1000));
}

TEST(CyclePacer, WhatTheLastCycleTookDoesNotStartTheNextOne) {
  // The race behind a flaky engine test: a caller enqueued and waited after
  // the cycle began but before it took the queue. That cycle runs its
  // tensors; the next must wait for new work, not start at once and take
  // the next burst half queued.
  CyclePacer pacer(milliseconds(20000));
  pacer.wait_for_cycle(Clock::now());  // the cycle begins
  EXPECT_TRUE(pacer.note_enqueue());
  pacer.note_caller_waits();
  pacer.note_queue_taken();  // ... and takes the enqueue
  EXPECT_GE(wait_with_deadline(pacer, milliseconds(400)), milliseconds(390));
}

TEST(CyclePacer, OnlyTheFirstEnqueueSinceTheTakeWakesTheBackgroundThread) {
  CyclePacer pacer(milliseconds(1000));
  pacer.note_queue_taken();
  EXPECT_TRUE(pacer.note_enqueue());
  EXPECT_FALSE(pacer.note_enqueue());
  pacer.note_queue_taken();
  EXPECT_TRUE(pacer.note_enqueue());
}

TEST(CyclePacer, WithoutAWaiterTheCycleStartsOnceTheEnqueuesSettle) {
  CyclePacer pacer(milliseconds(3000));  // settle time 300 ms
  pacer.note_queue_taken();
  pacer.note_enqueue();
  const auto took = wait_with_deadline(pacer, milliseconds(20000));
  EXPECT_GE(took, milliseconds(290));
  EXPECT_LT(took, milliseconds(5000));
}

TEST(CyclePacer, AnEnqueueAfterTheWaitStartsANewBurst) {
  // The wait said the burst was over; a later enqueue (another thread's
  // burst) takes that back, so the cycle waits for the settle time again.
  CyclePacer pacer(milliseconds(3000));
  pacer.note_queue_taken();
  pacer.note_enqueue();
  pacer.note_caller_waits();
  pacer.note_enqueue();
  EXPECT_GE(wait_with_deadline(pacer, milliseconds(20000)), milliseconds(290));
}

TEST(CyclePacer, AWaiterOnAnotherThreadWakesTheSleepingCycle) {
  CyclePacer pacer(milliseconds(20000));  // settle time 2 s
  pacer.note_queue_taken();
  pacer.note_enqueue();
  std::thread caller([&] {
    std::this_thread::sleep_for(milliseconds(100));
    pacer.note_caller_waits();
  });
  const auto took = wait_with_deadline(pacer, milliseconds(20000));
  caller.join();
  EXPECT_GE(took, milliseconds(90));
  EXPECT_LT(took, milliseconds(1500));
}

TEST(CyclePacer, WithNothingQueuedTheDeadlineHolds) {
  CyclePacer pacer(milliseconds(1000));
  pacer.note_queue_taken();
  pacer.note_caller_waits();  // waits for something already taken: no effect
  EXPECT_GE(wait_with_deadline(pacer, milliseconds(300)), milliseconds(290));
}

TEST(CyclePacer, ShutdownEndsTheWait) {
  CyclePacer pacer(milliseconds(1000));
  std::thread stopper([&] {
    std::this_thread::sleep_for(milliseconds(50));
    pacer.request_shutdown();
  });
  EXPECT_LT(wait_with_deadline(pacer, milliseconds(20000)), milliseconds(5000));
  stopper.join();
  EXPECT_TRUE(pacer.shutdown_requested());
}

TEST(CyclePacer, PausesGrowAndAreCapped) {
  CyclePacer pacer(milliseconds(10));
  EXPECT_EQ(pacer.idle_pause(0), milliseconds(10));
  EXPECT_EQ(pacer.idle_pause(1), milliseconds(20));
  EXPECT_EQ(pacer.idle_pause(2), milliseconds(40));
  EXPECT_EQ(pacer.idle_pause(50), milliseconds(80));
  EXPECT_EQ(pacer.catch_up_pause(0), milliseconds(1));
  EXPECT_EQ(pacer.catch_up_pause(1), milliseconds(2));
  EXPECT_EQ(pacer.catch_up_pause(3), milliseconds(8));
  EXPECT_EQ(pacer.catch_up_pause(4), milliseconds(10));
  EXPECT_EQ(pacer.catch_up_pause(1000), milliseconds(10));
}

}  // namespace
}  // namespace kolo::core
