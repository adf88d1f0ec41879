#include "core/cycle_pacer.h"

#include <algorithm>

namespace kolo::core {
namespace {

// How long a burst of enqueues must have been quiet before a cycle starts
// early when no caller has said it waits.
std::chrono::microseconds settle_time(std::chrono::microseconds cycle_time) {
  return cycle_time / 10;
}

}  // namespace

bool CyclePacer::note_enqueue(Clock::time_point now) {
  MutexLock lock(mutex_);
  const bool first_since_cycle = !burst_pending();
  last_enqueue_ = now;
  // An enqueue after a wait starts a new burst on some thread: the wait no
  // longer says that everything is queued.
  burst_over_ = false;
  return first_since_cycle;
}

void CyclePacer::note_caller_waits() {
  {
    MutexLock lock(mutex_);
    if (!burst_pending() || burst_over_) return;
    burst_over_ = true;
  }
  wake_.notify_one();
}

void CyclePacer::request_shutdown() {
  {
    MutexLock lock(mutex_);
    shutdown_requested_ = true;
  }
  wake_.notify_all();
}

bool CyclePacer::shutdown_requested() const {
  MutexLock lock(mutex_);
  return shutdown_requested_;
}

void CyclePacer::wait_for_cycle(Clock::time_point deadline) {
  // Ranks that start early just wait inside the negotiation for the others.
  MutexLock lock(mutex_);
  const auto settle = settle_time(cycle_time_);
  while (!shutdown_requested_) {
    auto now = Clock::now();
    if (now >= deadline) break;
    auto wake_at = deadline;
    if (burst_pending()) {
      if (burst_over_ || now >= last_enqueue_ + settle) break;
      wake_at = std::min(deadline, last_enqueue_ + settle);
    }
    wake_.wait_until(mutex_, wake_at);
  }
}

void CyclePacer::note_queue_taken() {
  MutexLock lock(mutex_);
  last_taken_ = Clock::now();
  burst_over_ = false;
}

void CyclePacer::set_cycle_time(std::chrono::microseconds cycle_time) {
  MutexLock lock(mutex_);
  cycle_time_ = cycle_time;
}

std::chrono::microseconds CyclePacer::cycle_time() const {
  MutexLock lock(mutex_);
  return cycle_time_;
}

std::chrono::microseconds CyclePacer::idle_pause(int idle_cycles) const {
  // A forward pass then costs the compute cores a negotiation every few
  // milliseconds instead of every cycle. The pause ends at once when a
  // tensor is enqueued here, and a rank with work waits inside the
  // negotiation for a pausing peer only if that peer has nothing to submit,
  // which training steps (every rank submits the same gradients) do not do;
  // a joined rank keeps its join pending and so never pauses.
  constexpr int kMaxIdleFactor = 8;
  const int factor = idle_cycles >= 3 ? kMaxIdleFactor : 1 << idle_cycles;
  return cycle_time() * factor;
}

std::chrono::microseconds CyclePacer::catch_up_pause(int unanswered_cycles) const {
  // A peer has not submitted this rank's waiting tensors yet, typically
  // because its cycle began in the middle of the same burst (or just before
  // it). The rest is on its way, so the next negotiation comes after a
  // settle time instead of a whole cycle; this rank then waits inside it for
  // the peer (sleeping, not spinning). Doubling while cycles run nothing
  // keeps tensors that peers never submit (a stall) from making the cycles
  // fast.
  const auto cycle = cycle_time();
  return std::min(cycle, settle_time(cycle) * (1 << std::min(unanswered_cycles, 10)));
}

}  // namespace kolo::core
