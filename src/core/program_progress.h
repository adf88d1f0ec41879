// ProgramProgress: whether the program went on past an error it was told
// of, which is how the engine knows it caught the error. A negotiation error
// (a mismatch, a stalled tensor) leaves the engine running, and its report
// for kolorun's last line (rendezvous/failure_report.h) must be withdrawn
// once the program has survived it, or a later failure would be named after
// it. Going on means submitting again after being told: a program that ends
// on the error submits nothing more, and gradients it submitted before it
// looked at the failed handle (a backward pass still running) do not count.
//
// Shared with every handle the engine creates (handles may outlive the
// engine); lock-free, as enqueue and status reads are on the hot path.
#pragma once

#include <atomic>

namespace kolo::core {

class ProgramProgress {
 public:
  // A caller read the status of a failed operation (or its completion
  // callback was given one).
  void told_of_failure() { state_.store(kTold, std::memory_order_relaxed); }
  // The program submitted an operation.
  void submitted() {
    int told = kTold;
    if (state_.load(std::memory_order_relaxed) == told) {
      state_.compare_exchange_strong(told, kWentOn, std::memory_order_relaxed);
    }
  }
  // The background thread: whether the program went on past a failure since
  // the last call that returned true.
  bool went_on_past_failure() {
    int went_on = kWentOn;
    return state_.load(std::memory_order_relaxed) == went_on &&
           state_.compare_exchange_strong(went_on, kNothing, std::memory_order_relaxed);
  }

 private:
  static constexpr int kNothing = 0;
  static constexpr int kTold = 1;
  static constexpr int kWentOn = 2;
  std::atomic<int> state_{kNothing};
};

}  // namespace kolo::core
