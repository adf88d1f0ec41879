#include "core/handle_state.h"

#include "core/cycle_pacer.h"
#include "core/program_progress.h"

namespace kolo::core {

const Status* HandleState::mark_done(Status status, Callback& callback) {
  MutexLock lock(mutex_);
  if (done_.load(std::memory_order_relaxed)) return nullptr;
  status_ = std::move(status);
  callback = std::move(callback_);
  done_.store(true, std::memory_order_release);
  return &status_;  // never written again once done_ is set
}

void HandleState::complete(Status status) {
  Callback callback;
  const Status* final_status = mark_done(std::move(status), callback);
  if (final_status == nullptr) return;
  done_cv_.notify_all();
  if (callback) run_callback(callback, *final_status);
}

void HandleState::complete_all(const std::vector<HandleState*>& handles, const Status& status) {
  std::vector<Callback> callbacks(handles.size());
  std::vector<const Status*> marked(handles.size(), nullptr);
  for (size_t i = 0; i < handles.size(); ++i)
    marked[i] = handles[i]->mark_done(status, callbacks[i]);
  for (size_t i = 0; i < handles.size(); ++i) {
    if (marked[i] == nullptr) continue;
    handles[i]->done_cv_.notify_all();
    if (callbacks[i]) handles[i]->run_callback(callbacks[i], *marked[i]);
  }
}

void HandleState::caller_waits() const {
  if (links_ && !done()) links_->pacer->note_caller_waits();
}

bool HandleState::done() const {
  return done_.load(std::memory_order_acquire);
}

bool HandleState::wait_for(std::chrono::nanoseconds timeout) const {
  if (done()) return true;
  caller_waits();
  MutexLock lock(mutex_);
  // now() + a timeout near nanoseconds::max() would overflow into the past.
  if (timeout >= std::chrono::hours(24 * 365 * 100)) {
    while (!done_.load(std::memory_order_relaxed)) done_cv_.wait(mutex_);
    return true;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done_.load(std::memory_order_relaxed)) {
    if (!done_cv_.wait_until(mutex_, deadline)) return done_.load(std::memory_order_relaxed);
  }
  return true;
}

void HandleState::wait() const {
  if (done()) return;
  caller_waits();
  MutexLock lock(mutex_);
  while (!done_.load(std::memory_order_relaxed)) done_cv_.wait(mutex_);
}

Status HandleState::status() const {
  Status status;
  if (done()) {
    status = status_;  // final: written before done_ was set
  } else {
    MutexLock lock(mutex_);
    status = status_;
  }
  if (!status.ok() && links_) links_->progress->told_of_failure();
  return status;
}

void HandleState::run_callback(const Callback& callback, const Status& status) const {
  // The callback hands the status to the program (a framework's op, an
  // event loop).
  if (!status.ok() && links_) links_->progress->told_of_failure();
  callback(status);
}

void HandleState::on_complete(Callback callback) {
  const Status* final_status = nullptr;
  {
    MutexLock lock(mutex_);
    if (!done_.load(std::memory_order_relaxed)) {
      callback_ = std::move(callback);
      return;
    }
    final_status = &status_;  // never written again once done_ is set
  }
  run_callback(callback, *final_status);
}

}  // namespace kolo::core
