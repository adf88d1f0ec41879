#include "core/handle_state.h"

namespace kolo::core {

void HandleState::complete(Status status) {
  Callback callback;
  const Status* final_status = nullptr;
  {
    MutexLock lock(mutex_);
    if (done_) return;
    done_ = true;
    status_ = std::move(status);
    callback = std::move(callback_);
    final_status = &status_;  // never written again once done_ is set
  }
  done_cv_.notify_all();
  if (callback) callback(*final_status);
}

bool HandleState::done() const {
  MutexLock lock(mutex_);
  return done_;
}

bool HandleState::wait_for(std::chrono::nanoseconds timeout) const {
  MutexLock lock(mutex_);
  // now() + a timeout near nanoseconds::max() would overflow into the past.
  if (timeout >= std::chrono::hours(24 * 365 * 100)) {
    while (!done_) done_cv_.wait(mutex_);
    return true;
  }
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!done_) {
    if (!done_cv_.wait_until(mutex_, deadline)) return done_;
  }
  return true;
}

void HandleState::wait() const {
  MutexLock lock(mutex_);
  while (!done_) done_cv_.wait(mutex_);
}

Status HandleState::status() const {
  MutexLock lock(mutex_);
  return status_;
}

void HandleState::on_complete(Callback callback) {
  const Status* final_status = nullptr;
  {
    MutexLock lock(mutex_);
    if (!done_) {
      callback_ = std::move(callback);
      return;
    }
    final_status = &status_;  // never written again once done_ is set
  }
  callback(*final_status);
}

}  // namespace kolo::core
