// CyclePacer: decides when the engine's background thread starts its next
// cycle. The framework threads tell it about enqueues and about a caller
// that starts waiting for an unfinished handle; the background thread sleeps
// in wait_for_cycle until the cycle is due.
//
// A cycle starts at its deadline (KOLO_CYCLE_TIME bounds every wait), or
// earlier when this rank's burst of enqueues is over:
// - at once when a caller waits for a handle after the last enqueue: a
//   training step enqueues its gradients and then synchronizes, so the first
//   wait marks the end of the burst on that thread;
// - otherwise once no enqueue came for a tenth of the cycle time (callers
//   that never block, such as completion callbacks).
// Neither waits for a tensor that may never come: the deadline still holds.
//
// Shared with every handle the engine creates (handles may outlive the
// engine), so it holds no pointer back to the engine.
#pragma once

#include <chrono>

#include "common/thread_annotations.h"

namespace kolo::core {

class CyclePacer {
 public:
  using Clock = std::chrono::steady_clock;

  explicit CyclePacer(std::chrono::microseconds cycle_time) : cycle_time_(cycle_time) {}

  // A framework thread queued work at `now` (the enqueue's own timestamp:
  // one clock read per tensor instead of two). Returns whether the
  // background thread must be woken (only the first enqueue since a cycle
  // took the queue: a wake-up per tensor cost a context switch each on a
  // busy host).
  bool note_enqueue(Clock::time_point now = Clock::now()) KOLO_EXCLUDES(mutex_);
  void wake() { wake_.notify_one(); }
  // A caller is about to block on a handle that is not done: if work was
  // queued since a cycle took the queue, the burst is over on this thread and the
  // cycle starts now.
  void note_caller_waits() KOLO_EXCLUDES(mutex_);
  void request_shutdown() KOLO_EXCLUDES(mutex_);
  bool shutdown_requested() const KOLO_EXCLUDES(mutex_);

  // Background thread: sleeps until the cycle is due (see the file comment)
  // or shutdown is requested.
  void wait_for_cycle(Clock::time_point deadline) KOLO_EXCLUDES(mutex_);
  // Background thread, when the cycle takes the queued entries, in the same
  // critical section as the take (the one enqueues note theirs in): what
  // was queued and waited for until then is this cycle's, so neither an
  // enqueue nor a waiting caller from before it starts the next cycle. Were
  // the burst marked when the cycle began instead, a caller that enqueued
  // and waited in between would start the next cycle at once, in the middle
  // of the following burst.
  void note_queue_taken() KOLO_EXCLUDES(mutex_);

  // The autotuner changes the cycle time; the background thread alone calls
  // these.
  void set_cycle_time(std::chrono::microseconds cycle_time) KOLO_EXCLUDES(mutex_);
  std::chrono::microseconds cycle_time() const KOLO_EXCLUDES(mutex_);

  // While this rank has nothing queued or in flight, the pause between
  // cycles doubles after each idle cycle up to 8 cycle times.
  std::chrono::microseconds idle_pause(int idle_cycles) const KOLO_EXCLUDES(mutex_);
  // After a cycle that left this rank's tensors waiting for a peer: a tenth
  // of the cycle time, doubling up to the cycle time while such cycles run
  // nothing.
  std::chrono::microseconds catch_up_pause(int unanswered_cycles) const KOLO_EXCLUDES(mutex_);

 private:
  bool burst_pending() const KOLO_REQUIRES(mutex_) { return last_enqueue_ > last_taken_; }

  mutable Mutex mutex_;
  CondVar wake_;  // an enqueue, a waiting caller or a shutdown; waits on mutex_
  std::chrono::microseconds cycle_time_ KOLO_GUARDED_BY(mutex_);
  bool shutdown_requested_ KOLO_GUARDED_BY(mutex_) = false;
  Clock::time_point last_enqueue_ KOLO_GUARDED_BY(mutex_){};
  Clock::time_point last_taken_ KOLO_GUARDED_BY(mutex_){};
  // Set when a caller waits after enqueueing; cleared when a cycle takes the
  // queue.
  bool burst_over_ KOLO_GUARDED_BY(mutex_) = false;
};

}  // namespace kolo::core
