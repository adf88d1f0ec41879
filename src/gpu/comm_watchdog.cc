#include "gpu/comm_watchdog.h"

#include <fmt/format.h>

#include <thread>

#include "common/error.h"

namespace kolo::gpu {

CommWatchdog::CommWatchdog(WatchedCommunicator& communicator, WatchdogOptions options)
    : communicator_(communicator), options_(options) {}

void CommWatchdog::wait(const std::function<bool()>& done, std::string_view what) {
  if (aborted_) {
    throw AbortedError(fmt::format("{} on the {}: the communicator was aborted earlier ({})", what,
                                   communicator_.describe(), abort_reason_));
  }
  const auto deadline = std::chrono::steady_clock::now() + options_.timeout;
  while (true) {
    // The error first: a collective whose peer died may still report its
    // event as done after the abort, and the error is the root cause.
    if (std::optional<std::string> error = communicator_.async_error()) {
      fail_after_abort(false, *error, what);
    }
    if (done()) return;
    if (std::chrono::steady_clock::now() >= deadline) {
      fail_after_abort(true,
                       fmt::format("not done after {} ms: a peer died or stopped "
                                   "(KOLO_PEER_TIMEOUT)",
                                   options_.timeout.count()),
                       what);
    }
    std::this_thread::sleep_for(options_.poll_interval);
  }
}

void CommWatchdog::fail_after_abort(bool timed_out, const std::string& cause,
                                    std::string_view what) {
  aborted_ = true;
  abort_reason_ = cause;
  communicator_.abort();
  const std::string message = fmt::format("{} on the {} failed: {}; the communicator was aborted",
                                          what, communicator_.describe(), cause);
  if (timed_out) throw TimeoutError(message);
  throw IoError(message);
}

}  // namespace kolo::gpu
