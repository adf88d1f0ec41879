// HandleState: the completion of one enqueued operation, shared by the
// caller (who waits or polls) and the background thread (who completes it).
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <vector>

#include "common/thread_annotations.h"
#include "core/output_pool.h"
#include "kolo/status.h"

namespace kolo::core {

// What an operation produced besides the caller's own output buffer.
struct HandleResult {
  // Outputs whose size only negotiation knows (OutputBuffer::kEngine in
  // core/operation_table.h: allgather, alltoall, reducescatter) are
  // allocated here, from the engine's OutputPool (uninitialised: the
  // collective writes every byte).
  OutputBlock data;
  std::vector<int64_t> shape;
  // Alltoall: rows received from each rank.
  std::vector<int64_t> received_splits;
  // Join: the last rank to join. Process set add: the new set's id.
  int64_t value = -1;
};

class CyclePacer;       // core/cycle_pacer.h
class ProgramProgress;  // core/program_progress.h

// What every handle of an engine reports to, shared by all of them (one
// reference count per handle, not one per member: both threads touch it).
struct HandleLinks {
  // Hears when a caller starts waiting for a handle unfinished: the end of a
  // burst of enqueues, so the engine's cycle can start at once.
  std::shared_ptr<CyclePacer> pacer;
  // Hears when the program is told an operation failed (a status read, a
  // callback), to know later whether it went on past it.
  std::shared_ptr<ProgramProgress> progress;
};

class HandleState {
 public:
  using Callback = std::function<void(const Status&)>;

  HandleState() = default;
  explicit HandleState(std::shared_ptr<const HandleLinks> links) : links_(std::move(links)) {}

  // Marks the operation finished. The first call wins; later ones are
  // ignored (a response and a shutdown can race to finish a handle).
  void complete(Status status) KOLO_EXCLUDES(mutex_);
  // complete() for all of `handles`, but every handle is marked done before
  // any waiter is woken: a caller waiting for the first tensor of a fused
  // response then wakes once, finding the rest done, instead of waking and
  // sleeping again for each (a context switch per tensor on a busy host).
  static void complete_all(const std::vector<HandleState*>& handles, const Status& status);
  bool done() const KOLO_EXCLUDES(mutex_);
  // Waits up to `timeout`; true once done.
  bool wait_for(std::chrono::nanoseconds timeout) const KOLO_EXCLUDES(mutex_);
  void wait() const KOLO_EXCLUDES(mutex_);
  // Valid once done(). For the caller: the program is told of a failure.
  Status status() const KOLO_EXCLUDES(mutex_);
  // Written by the background thread before complete(); read by the caller
  // after done() (complete() publishes it).
  HandleResult& result() { return result_; }
  const HandleResult& result() const { return result_; }
  // Runs `callback` on completion (at once if already done), on the
  // completing thread; bindings use it to wake event loops.
  void on_complete(Callback callback) KOLO_EXCLUDES(mutex_);

 private:
  // Marks done without waking anyone and hands over the callback to run.
  // Returns the final status, or null when the handle was already done.
  const Status* mark_done(Status status, Callback& callback) KOLO_EXCLUDES(mutex_);
  void caller_waits() const KOLO_EXCLUDES(mutex_);
  void run_callback(const Callback& callback, const Status& status) const;

  const std::shared_ptr<const HandleLinks> links_;  // null for a handle of no engine
  mutable Mutex mutex_;
  mutable CondVar done_cv_;
  // Set once, under mutex_ (a waiter on done_cv_ cannot miss it), with
  // release order: done() and the waits read it without the lock, so a
  // step that synchronizes gradients already finished takes no lock for
  // them.
  std::atomic<bool> done_{false};
  // Written once, under mutex_, before done_ is set; never changes after,
  // so it is read without the lock once done_ reads true.
  Status status_;
  Callback callback_ KOLO_GUARDED_BY(mutex_);
  HandleResult result_;
};

}  // namespace kolo::core
