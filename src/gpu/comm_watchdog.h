// The asynchronous error checks that keep a GPU job from hanging on a dead
// peer. NCCL has no watchdog of its own: a collective whose peer died or
// stopped spins on the GPU forever, and the host thread waiting for its
// completion event waits forever with it. So the engine's executor never
// blocks on a collective's event; it waits through CommWatchdog::wait, which
// polls the event and the communicator's asynchronous error
// (ncclCommGetAsyncError) and, on an error or when the operation is not done
// within the peer timeout, aborts the communicator (ncclCommAbort, which
// also ends the kernels stuck in it) and throws naming the cause. The other
// ranks' watchdogs then see their own communicator fail (or time out) and
// the engine's error path tells them the root cause through the store, as
// it does for TCP.
//
// The watchdog owns no thread: it runs on the thread that waits (the
// executor's), so a test drives it with a fake communicator and no GPU.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

namespace kolo::gpu {

// What the watchdog needs from a communicator (the NCCL plugin's, or a test
// double).
class WatchedCommunicator {
 public:
  virtual ~WatchedCommunicator() = default;
  // The communicator's asynchronous error (ncclCommGetAsyncError), or no
  // value while it is healthy (ncclSuccess, or ncclInProgress while a
  // non-blocking init or abort is still running). Never blocks.
  virtual std::optional<std::string> async_error() = 0;
  // Ends every operation in flight on the communicator and makes it
  // unusable (ncclCommAbort). Called at most once per communicator.
  virtual void abort() = 0;
  // "NCCL communicator of process set 0 (4 ranks, cuda:1)", for messages.
  virtual std::string describe() const = 0;
};

struct WatchdogOptions {
  // How often a waiting operation checks its completion and the
  // communicator's error: short enough to see a failure at once, long
  // enough that polling costs nothing next to a collective.
  std::chrono::microseconds poll_interval{200};
  // The peer timeout (KOLO_PEER_TIMEOUT's meaning): an operation not done by
  // then is taken as a peer that died or stopped.
  std::chrono::milliseconds timeout{std::chrono::seconds(60)};
};

class CommWatchdog {
 public:
  CommWatchdog(WatchedCommunicator& communicator, WatchdogOptions options);

  // Returns once `done()` is true (the operation's completion event fired).
  // Throws IoError with the communicator's asynchronous error, or
  // TimeoutError when `done()` stays false for the timeout; either way the
  // communicator is aborted first and stays aborted (later waits throw
  // AbortedError at once). `what` names the operation ("allreduce of
  // 'grad.fc1.weight'").
  void wait(const std::function<bool()>& done, std::string_view what);

  bool aborted() const { return aborted_; }

 private:
  [[noreturn]] void fail_after_abort(bool timed_out, const std::string& cause,
                                     std::string_view what);

  WatchedCommunicator& communicator_;
  WatchdogOptions options_;
  bool aborted_ = false;
  std::string abort_reason_;
};

}  // namespace kolo::gpu
