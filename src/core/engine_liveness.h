// EngineLiveness: tells the peers when this rank's engine (background)
// thread is wedged. The transport's heartbeats come from its own thread, so
// a rank whose engine thread is stuck (a completion callback that never
// returns, a deadlock) keeps beating and its peers would wait on it for the
// operation timeout. The engine marks when it is in its own code and when it
// waits (for its next cycle, or on its peers inside a negotiation or a
// collective, whose silence the heartbeats catch); a watchdog thread aborts
// the backend, naming this rank, once the engine has been in its own code
// longer than the bound (KOLO_ENGINE_WEDGED_SECONDS). The abort reaches every
// peer in milliseconds (an abort frame, the shared-memory abort flag), so
// every rank and kolorun name the wedged one.
#pragma once

#include <atomic>
#include <chrono>
#include <functional>
#include <string>
#include <thread>

#include "common/thread_annotations.h"

namespace kolo::core {

class EngineLiveness {
 public:
  using Clock = std::chrono::steady_clock;

  // bound zero: no watchdog thread, nothing is checked. `abort` is called
  // once, from the watchdog thread, with the reason naming `who`.
  EngineLiveness(std::chrono::milliseconds bound, std::string who,
                 std::function<void(const std::string&)> abort);
  ~EngineLiveness();
  EngineLiveness(const EngineLiveness&) = delete;
  EngineLiveness& operator=(const EngineLiveness&) = delete;

  // The engine thread runs its own code from now on (restarts the clock).
  void working() noexcept { since_ns_.store(now_ns(), std::memory_order_relaxed); }
  // The engine thread waits on something whose liveness is checked
  // elsewhere (its pacer, the peers): never wedged while waiting.
  void waiting() noexcept { since_ns_.store(kWaiting, std::memory_order_relaxed); }

  // Marks a wait on the peers (a negotiation, a collective) for its scope;
  // the engine is working again after it.
  class PeerWait {
   public:
    explicit PeerWait(EngineLiveness& liveness) : liveness_(liveness) { liveness_.waiting(); }
    ~PeerWait() { liveness_.working(); }
    PeerWait(const PeerWait&) = delete;
    PeerWait& operator=(const PeerWait&) = delete;

   private:
    EngineLiveness& liveness_;
  };

  // The reason given to the peers (also for tests).
  static std::string wedged_reason(const std::string& who, std::chrono::milliseconds stuck);

 private:
  static constexpr int64_t kWaiting = 0;
  static int64_t now_ns() noexcept {
    // Never kWaiting: the steady clock is far from its epoch in practice,
    // and 1 ns off does not matter.
    const int64_t ns =
        std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now().time_since_epoch())
            .count();
    return ns == kWaiting ? 1 : ns;
  }
  void watch() KOLO_EXCLUDES(mutex_);

  const std::chrono::milliseconds bound_;
  const std::string who_;
  const std::function<void(const std::string&)> abort_;
  std::atomic<int64_t> since_ns_{kWaiting};
  Mutex mutex_;
  CondVar stop_cv_;
  bool stop_ KOLO_GUARDED_BY(mutex_) = false;
  std::thread thread_;  // last: started once everything above is set
};

}  // namespace kolo::core
