// TcpCore: waiting for an operation. A waiting caller runs the event loop
// itself (progress.cc) instead of sleeping while the progress thread does:
// on a host with few cores, handing every message from the progress thread
// to the caller costs two context switches, which dominated small-message
// latency and cut bandwidth at every size.
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "common/check.h"
#include "common/error.h"
#include "transport/tcp/tcp_core.h"

namespace kolo::transport::tcp {

namespace {

// How long a wait allows the transport to let go of a failed operation's
// buffer; it only takes one non-blocking read, so running out is a bug.
constexpr auto kReleaseGrace = std::chrono::seconds(10);
// A waiter that cannot drive (another thread polls) re-checks this often,
// in case the poller leaves before finishing this waiter's operation.
constexpr auto kRetryDrive = std::chrono::milliseconds(1);
// Operations up to this size spin before sleeping (TcpOptions::spin).
constexpr size_t kSpinMaxBytes = 64 * 1024;

const char* verb(const Operation& op) {
  return op.kind == Operation::Kind::kRecv ? "receive" : "send";
}

// Whole milliseconds until `until`, rounded up and at least 1, so a wait
// never spins with a zero timeout.
int millis_until(Clock::time_point until) {
  auto left = std::chrono::ceil<std::chrono::milliseconds>(until - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 1, 1000 * 1000));
}

}  // namespace

void TcpCore::wait(Operation& op) {
  waiters_.fetch_add(1);
  struct Leave {
    TcpCore* core;
    ~Leave() {
      core->note_caller_activity();
      core->waiters_.fetch_sub(1);
    }
  } leave{this};

  MutexLock lock(mutex_);
  const auto start = Clock::now();
  auto deadline = start + options_.op_timeout;
  // Only small operations spin: a large one takes longer than the wake-up
  // it would save, and on a busy host the spin takes CPU from the peers.
  const auto spin_until =
      start + (op.bytes <= kSpinMaxBytes ? options_.spin : std::chrono::microseconds(0));
  bool timed_out = false;
  while (progress_of(op).state != OperationState::kFinished) {
    const auto now = Clock::now();
    if (now >= deadline) {
      KOLO_CHECK_MSG(!timed_out, "transport kept the buffer of a failed {} (tag {}) for {} s",
                     verb(op), op.tag, kReleaseGrace.count());
      timed_out = true;
      if (!is_done(progress_of(op).state)) {
        std::string message =
            fmt::format("timed out after {} s waiting for {} ({} tag {}, {} bytes)",
                        static_cast<double>(options_.op_timeout.count()) / 1000.0, names_[op.peer],
                        verb(op), op.tag, op.bytes);
        lock.unlock();
        poison(std::make_exception_ptr(TimeoutError(message)), rank_, message, true);
        lock.lock();
      }
      deadline = Clock::now() + kReleaseGrace;
      continue;
    }
    // try_lock while holding mutex_ cannot deadlock against the loop, which
    // takes poll_mutex_ then mutex_.
    if (!poll_mutex_.try_lock()) {
      // The progress thread may sit in epoll_wait for a while; nudge it so
      // it sees this waiter and parks, then take over on the next round.
      lock.unlock();
      wake_progress();
      lock.lock();
      if (progress_of(op).state != OperationState::kFinished)
        changed_.wait_until(mutex_, std::min(deadline, now + kRetryDrive));
      continue;
    }
    MutexLock poll(poll_mutex_, std::adopt_lock);
    // While we sleep in epoll_wait, complete() from any other thread writes
    // the eventfd (see complete()); set under mutex_, so none is missed.
    driver_ = std::this_thread::get_id();
    driver_sleeping_ = true;
    lock.unlock();
    try {
      const bool spinning = now < spin_until;
      poll_once(spinning ? 0 : millis_until(std::min(deadline, now + keep_alive_period())), &op);
    } catch (const std::exception& e) {
      std::string message = std::string("transport event loop failed: ") + e.what();
      poison(std::make_exception_ptr(InternalError(message)), rank_, message, true);
      release_buffers_after_poison();
    }
    poll.unlock();
    if (now < spin_until) std::this_thread::yield();  // the peer may need this core
    lock.lock();
    driver_sleeping_ = false;
    // Other waiters retry driving only every kRetryDrive; tell them the loop
    // is free in case this wait is about to end.
    if (waiters_.load() > 1) changed_.notify_all();
  }
  if (progress_of(op).error) std::rethrow_exception(progress_of(op).error);
}

bool TcpCore::test(Operation& op) {
  MutexLock lock(mutex_);
  const Operation::Progress& progress = progress_of(op);
  if (progress.state != OperationState::kFinished) return false;
  if (progress.error) std::rethrow_exception(progress.error);
  return true;
}

void TcpCore::release(Operation& op) noexcept {
  {
    MutexLock lock(mutex_);
    const OperationState state = progress_of(op).state;
    if (state == OperationState::kFinished) return;
    if (state == OperationState::kPosted && matcher_.cancel(&op)) {
      complete(op, std::make_exception_ptr(AbortedError("receive cancelled")));
      return;
    }
  }
  try {
    wait(op);
  } catch (...) {
    // The Request is gone; nobody is left to report to.
  }
}

}  // namespace kolo::transport::tcp
