// While a job runs, the launcher takes SIGINT, SIGTERM and SIGHUP as events
// (a signalfd in its poll loop) instead of dying, so it can pass them on to
// every rank and still stop them all. Construct it before starting any
// thread: the signal mask is per thread, and threads inherit it. SIGPIPE
// is ignored meanwhile (a closed terminal or ssh pipe is an error value,
// not death). The destructor restores both.
#pragma once

#include <signal.h>

#include "runner/process.h"

namespace kolo::runner {

// The next signal pending on a signalfd, or 0.
int take_signal(int signal_fd);

class SignalCapture {
 public:
  SignalCapture();
  ~SignalCapture();
  SignalCapture(const SignalCapture&) = delete;
  SignalCapture& operator=(const SignalCapture&) = delete;

  int fd() const { return fd_.get(); }  // readable when a signal is pending
  int take() { return take_signal(fd_.get()); }

 private:
  sigset_t old_mask_{};
  struct sigaction old_pipe_ {};
  UniqueFd fd_;
};

}  // namespace kolo::runner
