#include "runner/signal_capture.h"

#include <fmt/format.h>
#include <pthread.h>
#include <sys/signalfd.h>
#include <unistd.h>

#include <cerrno>

#include "common/errno_text.h"
#include "common/error.h"

namespace kolo::runner {

SignalCapture::SignalCapture() {
  sigset_t mask;
  ::sigemptyset(&mask);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) ::sigaddset(&mask, sig);
  ::pthread_sigmask(SIG_BLOCK, &mask, &old_mask_);
  fd_ = UniqueFd(::signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK));
  if (!fd_.valid()) {
    int err = errno;
    ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
    throw IoError(fmt::format("signalfd: {}", errno_text(err)));
  }
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  ::sigaction(SIGPIPE, &ignore, &old_pipe_);
}

SignalCapture::~SignalCapture() {
  ::sigaction(SIGPIPE, &old_pipe_, nullptr);
  ::pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
}

int take_signal(int signal_fd) {
  signalfd_siginfo info{};
  ssize_t n = ::read(signal_fd, &info, sizeof info);
  return n == static_cast<ssize_t>(sizeof info) ? static_cast<int>(info.ssi_signo) : 0;
}

}  // namespace kolo::runner
