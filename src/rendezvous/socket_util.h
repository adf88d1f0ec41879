// Small POSIX socket helpers for the TCP store (client and server). Every
// blocking helper takes a deadline; sockets are non-blocking throughout and
// waiting happens in poll(). Failures throw IoError (TimeoutError when a
// deadline passes).
#pragma once

#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <span>
#include <string>

#include "common/unique_fd.h"

namespace kolo::rendezvous::net {

using Clock = std::chrono::steady_clock;

// "10.0.0.5:41234" or "[::1]:41234".
std::string describe_address(const sockaddr_storage& address, socklen_t length);

// A non-blocking listening socket on address:port (port 0 = ephemeral).
UniqueFd listen_tcp(const std::string& address, uint16_t port, int backlog);
uint16_t local_port(int fd);

// One non-blocking connect attempt to host:port, trying each resolved
// address. Returns a connected, non-blocking socket with TCP_NODELAY.
UniqueFd connect_tcp(const std::string& host, uint16_t port, Clock::time_point deadline);

void set_nonblocking(int fd);
void set_no_delay(int fd);

// Milliseconds until `deadline` for poll(): 0 if passed, rounded up, capped.
int poll_timeout_ms(Clock::time_point deadline);

// Writes or reads all of `bytes` before `deadline`. send uses MSG_NOSIGNAL:
// a closed peer is an IoError, not a SIGPIPE.
void send_all(int fd, std::span<const uint8_t> bytes, Clock::time_point deadline);
void recv_exact(int fd, std::span<uint8_t> bytes, Clock::time_point deadline);

// An eventfd another thread can use to wake a poll() loop.
class WakeupFd {
 public:
  WakeupFd();
  int fd() const { return fd_.get(); }
  void notify();
  void drain();

 private:
  UniqueFd fd_;
};

}  // namespace kolo::rendezvous::net
