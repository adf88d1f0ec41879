#include "core/engine_liveness.h"

#include <fmt/format.h>

#include <algorithm>

namespace kolo::core {

EngineLiveness::EngineLiveness(std::chrono::milliseconds bound, std::string who,
                               std::function<void(const std::string&)> abort)
    : bound_(bound), who_(std::move(who)), abort_(std::move(abort)) {
  if (bound_.count() > 0) thread_ = std::thread([this] { watch(); });
}

EngineLiveness::~EngineLiveness() {
  {
    MutexLock lock(mutex_);
    stop_ = true;
  }
  stop_cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

std::string EngineLiveness::wedged_reason(const std::string& who, std::chrono::milliseconds stuck) {
  return fmt::format(
      "{} is wedged: its engine thread made no progress for {:.1f} s outside any wait on its "
      "peers (a completion callback that does not return, or a deadlock); "
      "KOLO_ENGINE_WEDGED_SECONDS sets the bound",
      who, static_cast<double>(stuck.count()) / 1000.0);
}

void EngineLiveness::watch() {
  // A few checks per bound: the wedge is named at most a quarter late.
  const auto period =
      std::max<std::chrono::milliseconds>(bound_ / 4, std::chrono::milliseconds(10));
  while (true) {
    {
      MutexLock lock(mutex_);
      if (!stop_) stop_cv_.wait_until(mutex_, Clock::now() + period);
      if (stop_) return;
    }
    const int64_t since = since_ns_.load(std::memory_order_relaxed);
    if (since == kWaiting) continue;
    const auto stuck = std::chrono::duration_cast<std::chrono::milliseconds>(
        std::chrono::nanoseconds(now_ns() - since));
    if (stuck <= bound_) continue;
    // Once, without the lock (the destructor waits for it): the backend is
    // poisoned from here on, and the engine thread, if it ever returns,
    // fails with the same cause.
    abort_(wedged_reason(who_, stuck));
    return;
  }
}

}  // namespace kolo::core
