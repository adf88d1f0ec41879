#include "rendezvous/socket_util.h"

#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>

#include "common/errno_text.h"
#include "common/error.h"

namespace kolo::rendezvous::net {
namespace {

struct AddrInfoDeleter {
  void operator()(addrinfo* info) const { ::freeaddrinfo(info); }
};
using AddrInfoList = std::unique_ptr<addrinfo, AddrInfoDeleter>;

AddrInfoList resolve(const std::string& host, uint16_t port, bool passive) {
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_NUMERICSERV | (passive ? AI_PASSIVE : 0);
  addrinfo* found = nullptr;
  std::string service = std::to_string(port);
  int rc = ::getaddrinfo(host.empty() ? nullptr : host.c_str(), service.c_str(), &hints, &found);
  if (rc != 0) throw IoError("cannot resolve '" + host + "': " + ::gai_strerror(rc));
  return AddrInfoList(found);
}

// Waits for `events` on fd; returns false if the deadline passed first.
bool wait_for(int fd, short events, Clock::time_point deadline) {
  while (true) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, poll_timeout_ms(deadline));
    if (rc > 0) return true;
    if (rc == 0) {
      if (Clock::now() >= deadline) return false;
      continue;  // woke early through rounding
    }
    if (errno != EINTR) throw IoError("poll failed: " + errno_text(errno));
  }
}

}  // namespace

std::string describe_address(const sockaddr_storage& address, socklen_t length) {
  char host[NI_MAXHOST] = {};
  char service[NI_MAXSERV] = {};
  if (::getnameinfo(reinterpret_cast<const sockaddr*>(&address), length, host, sizeof host, service,
                    sizeof service, NI_NUMERICHOST | NI_NUMERICSERV) != 0)
    return "<unknown address>";
  if (address.ss_family == AF_INET6) return std::string("[") + host + "]:" + service;
  return std::string(host) + ":" + service;
}

void set_nonblocking(int fd) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0 || ::fcntl(fd, F_SETFL, flags | O_NONBLOCK) < 0)
    throw IoError("cannot make socket non-blocking: " + errno_text(errno));
}

void set_no_delay(int fd) {
  // Requests and replies are small and latency-bound; Nagle would add delay.
  int one = 1;
  ::setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

UniqueFd listen_tcp(const std::string& address, uint16_t port, int backlog) {
  AddrInfoList list = resolve(address, port, /*passive=*/true);
  std::string last_error = "no addresses";
  for (addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      last_error = errno_text(errno);
      continue;
    }
    // A restarted launcher must be able to bind its port again at once.
    int one = 1;
    ::setsockopt(fd.get(), SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (::bind(fd.get(), ai->ai_addr, ai->ai_addrlen) == 0 && ::listen(fd.get(), backlog) == 0)
      return fd;
    last_error = errno_text(errno);
  }
  throw IoError("cannot listen on " + address + ":" + std::to_string(port) + ": " + last_error);
}

uint16_t local_port(int fd) {
  sockaddr_storage address{};
  socklen_t length = sizeof address;
  if (::getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0)
    throw IoError("getsockname failed: " + errno_text(errno));
  if (address.ss_family == AF_INET6)
    return ntohs(reinterpret_cast<const sockaddr_in6*>(&address)->sin6_port);
  return ntohs(reinterpret_cast<const sockaddr_in*>(&address)->sin_port);
}

UniqueFd connect_tcp(const std::string& host, uint16_t port, Clock::time_point deadline) {
  AddrInfoList list = resolve(host, port, /*passive=*/false);
  std::string last_error = "no addresses";
  for (addrinfo* ai = list.get(); ai != nullptr; ai = ai->ai_next) {
    UniqueFd fd(
        ::socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, ai->ai_protocol));
    if (!fd.valid()) {
      last_error = errno_text(errno);
      continue;
    }
    int rc = ::connect(fd.get(), ai->ai_addr, ai->ai_addrlen);
    if (rc != 0 && errno == EINPROGRESS) {
      if (!wait_for(fd.get(), POLLOUT, deadline)) {
        last_error = "connect timed out";
        continue;
      }
      int err = 0;
      socklen_t len = sizeof err;
      ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &err, &len);
      rc = err == 0 ? 0 : -1;
      errno = err;
    }
    if (rc == 0) {
      set_no_delay(fd.get());
      return fd;
    }
    last_error = errno_text(errno);
  }
  throw IoError(last_error);
}

int poll_timeout_ms(Clock::time_point deadline) {
  auto left = deadline - Clock::now();
  if (left <= Clock::duration::zero()) return 0;
  auto ms = std::chrono::ceil<std::chrono::milliseconds>(left).count();
  return static_cast<int>(std::min<int64_t>(ms, 60'000));
}

void send_all(int fd, std::span<const uint8_t> bytes, Clock::time_point deadline) {
  size_t sent = 0;
  while (sent < bytes.size()) {
    ssize_t n = ::send(fd, bytes.data() + sent, bytes.size() - sent, MSG_NOSIGNAL);
    if (n > 0) {
      sent += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      if (!wait_for(fd, POLLOUT, deadline)) throw TimeoutError("timed out sending");
      continue;
    }
    throw IoError("send failed: " + errno_text(errno));
  }
}

void recv_exact(int fd, std::span<uint8_t> bytes, Clock::time_point deadline) {
  size_t got = 0;
  while (got < bytes.size()) {
    ssize_t n = ::recv(fd, bytes.data() + got, bytes.size() - got, 0);
    if (n > 0) {
      got += static_cast<size_t>(n);
      continue;
    }
    if (n == 0) throw IoError("connection closed by peer");
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) {
      if (!wait_for(fd, POLLIN, deadline)) throw TimeoutError("timed out receiving");
      continue;
    }
    throw IoError("recv failed: " + errno_text(errno));
  }
}

WakeupFd::WakeupFd() : fd_(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC)) {
  if (!fd_.valid()) throw IoError("eventfd failed: " + errno_text(errno));
}

void WakeupFd::notify() {
  uint64_t one = 1;
  ssize_t ignored = ::write(fd_.get(), &one, sizeof one);
  (void)ignored;  // a full counter still wakes the reader
}

void WakeupFd::drain() {
  uint64_t value = 0;
  ssize_t ignored = ::read(fd_.get(), &value, sizeof value);
  (void)ignored;
}

}  // namespace kolo::rendezvous::net
