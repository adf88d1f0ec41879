#include "core/handle_state.h"

namespace kolo::core {

void HandleState::complete(Status status) {
  Callback callback;
  {
    std::lock_guard lock(mutex_);
    if (done_) return;
    done_ = true;
    status_ = std::move(status);
    callback = std::move(callback_);
  }
  done_cv_.notify_all();
  if (callback) callback(status_);
}

bool HandleState::done() const {
  std::lock_guard lock(mutex_);
  return done_;
}

bool HandleState::wait_for(std::chrono::nanoseconds timeout) const {
  std::unique_lock lock(mutex_);
  // now() + a timeout near nanoseconds::max() would overflow into the past.
  if (timeout >= std::chrono::hours(24 * 365 * 100)) {
    done_cv_.wait(lock, [this] { return done_; });
    return true;
  }
  return done_cv_.wait_for(lock, timeout, [this] { return done_; });
}

void HandleState::wait() const {
  std::unique_lock lock(mutex_);
  done_cv_.wait(lock, [this] { return done_; });
}

Status HandleState::status() const {
  std::lock_guard lock(mutex_);
  return status_;
}

void HandleState::on_complete(Callback callback) {
  {
    std::lock_guard lock(mutex_);
    if (!done_) {
      callback_ = std::move(callback);
      return;
    }
  }
  callback(status_);
}

}  // namespace kolo::core
