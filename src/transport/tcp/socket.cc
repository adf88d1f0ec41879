#include "transport/tcp/socket.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <fstream>

#include "common/errno_text.h"
#include "common/error.h"
#include "transport/tcp/congestion.h"

namespace kolo::transport::tcp {

std::string connection_error_text(int err) {
  if (err == 0) return "connection closed by peer";
  return errno_text(err);
}

void set_nonblocking(int fd, bool on) {
  int flags = ::fcntl(fd, F_GETFL, 0);
  if (flags < 0) throw IoError("fcntl(F_GETFL): " + errno_text(errno));
  flags = on ? (flags | O_NONBLOCK) : (flags & ~O_NONBLOCK);
  if (::fcntl(fd, F_SETFL, flags) < 0) throw IoError("fcntl(F_SETFL): " + errno_text(errno));
}

namespace {

void set_int_option(int fd, int level, int name, int value, const char* what) {
  if (::setsockopt(fd, level, name, &value, sizeof(value)) != 0)
    throw IoError(std::string("setsockopt(") + what + "): " + errno_text(errno));
}

// The unprivileged ceiling for SO_SNDBUF/SO_RCVBUF; 0 if unreadable.
size_t read_sysctl_bytes(const char* path) {
  std::ifstream in(path);
  size_t value = 0;
  if (in >> value) return value;
  return 0;
}

sockaddr_in make_ipv4(const std::string& ipv4, int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  if (::inet_pton(AF_INET, ipv4.c_str(), &addr.sin_addr) != 1)
    throw InvalidArgument("not an IPv4 address: '" + ipv4 + "'");
  return addr;
}

int millis_until(Clock::time_point deadline) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 1000 * 1000));
}

// Waits for `events` on fd until the deadline. False on timeout.
bool poll_until(int fd, short events, Clock::time_point deadline) {
  for (;;) {
    pollfd p{fd, events, 0};
    int rc = ::poll(&p, 1, millis_until(deadline));
    if (rc > 0) return true;
    if (rc == 0) {
      if (Clock::now() >= deadline) return false;
      continue;
    }
    if (errno != EINTR) return false;
  }
}

}  // namespace

// Setting SO_RCVBUF/SO_SNDBUF pins the size and switches off the kernel's
// autotuning, which on Linux grows loopback and LAN buffers to tcp_rmem's
// max (often 6-32 MiB). So: use the privileged *FORCE variants when we may;
// otherwise set the size only when net.core.{r,w}mem_max allows all of it,
// because a silently capped value would be slower than autotuning.
void set_socket_buffers(int fd, size_t buffer_bytes) {
  if (buffer_bytes == 0) return;
  int value = static_cast<int>(std::min<size_t>(buffer_bytes, 1u << 30));
  struct Option {
    int force, plain;
    const char* sysctl;
  };
  for (Option o : {Option{SO_SNDBUFFORCE, SO_SNDBUF, "/proc/sys/net/core/wmem_max"},
                   Option{SO_RCVBUFFORCE, SO_RCVBUF, "/proc/sys/net/core/rmem_max"}}) {
    if (::setsockopt(fd, SOL_SOCKET, o.force, &value, sizeof(value)) == 0) continue;
    if (read_sysctl_bytes(o.sysctl) >= static_cast<size_t>(value))
      ::setsockopt(fd, SOL_SOCKET, o.plain, &value, sizeof(value));
  }
}

void set_data_socket_options(int fd, size_t buffer_bytes) {
  set_int_option(fd, IPPROTO_TCP, TCP_NODELAY, 1, "TCP_NODELAY");
  set_int_option(fd, SOL_SOCKET, SO_KEEPALIVE, 1, "SO_KEEPALIVE");
  // Probe an idle connection after 30 s, every 10 s, give up after 6 misses:
  // a dead host is noticed in ~90 s even when nothing is in flight.
  set_int_option(fd, IPPROTO_TCP, TCP_KEEPIDLE, 30, "TCP_KEEPIDLE");
  set_int_option(fd, IPPROTO_TCP, TCP_KEEPINTVL, 10, "TCP_KEEPINTVL");
  set_int_option(fd, IPPROTO_TCP, TCP_KEEPCNT, 6, "TCP_KEEPCNT");
  set_socket_buffers(fd, buffer_bytes);
}

UniqueFd listen_on(const std::string& ipv4, int backlog, size_t buffer_bytes,
                   const std::string& congestion, int* port) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) throw IoError("socket(): " + errno_text(errno));
  set_int_option(fd.get(), SOL_SOCKET, SO_REUSEADDR, 1, "SO_REUSEADDR");
  // Both inherited by accepted sockets.
  set_socket_buffers(fd.get(), buffer_bytes);
  if (!congestion.empty()) set_congestion(fd.get(), congestion);
  sockaddr_in addr = make_ipv4(ipv4, 0);
  if (::bind(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0)
    throw IoError("bind(" + ipv4 + "): " + errno_text(errno));
  if (::listen(fd.get(), backlog) != 0) throw IoError("listen(): " + errno_text(errno));
  socklen_t len = sizeof(addr);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&addr), &len) != 0)
    throw IoError("getsockname(): " + errno_text(errno));
  *port = ntohs(addr.sin_port);
  set_nonblocking(fd.get(), true);
  return fd;
}

UniqueFd try_connect(const std::string& ipv4, int port, size_t buffer_bytes,
                     const std::string& congestion, Clock::time_point deadline, int* err) {
  UniqueFd fd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!fd.valid()) throw IoError("socket(): " + errno_text(errno));
  set_socket_buffers(fd.get(), buffer_bytes);
  if (!congestion.empty()) set_congestion(fd.get(), congestion);
  set_nonblocking(fd.get(), true);
  sockaddr_in addr = make_ipv4(ipv4, port);
  if (::connect(fd.get(), reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) return fd;
  if (errno != EINPROGRESS) {
    *err = errno;
    return UniqueFd();
  }
  if (!poll_until(fd.get(), POLLOUT, deadline)) {
    *err = ETIMEDOUT;
    return UniqueFd();
  }
  int so_error = 0;
  socklen_t len = sizeof(so_error);
  ::getsockopt(fd.get(), SOL_SOCKET, SO_ERROR, &so_error, &len);
  if (so_error != 0) {
    *err = so_error;
    return UniqueFd();
  }
  return fd;
}

UniqueFd accept_until(int listener, Clock::time_point deadline) {
  for (;;) {
    UniqueFd fd(::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC | SOCK_NONBLOCK));
    if (fd.valid()) return fd;
    if (errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && errno != ECONNABORTED)
      throw IoError("accept(): " + errno_text(errno));
    if (!poll_until(listener, POLLIN, deadline)) return UniqueFd();
  }
}

bool write_all_until(int fd, const void* data, size_t bytes, Clock::time_point deadline, int* err) {
  const char* p = static_cast<const char*>(data);
  while (bytes > 0) {
    ssize_t n = ::send(fd, p, bytes, MSG_NOSIGNAL);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK) {
      *err = errno;
      return false;
    }
    if (!poll_until(fd, POLLOUT, deadline)) {
      *err = ETIMEDOUT;
      return false;
    }
  }
  return true;
}

bool read_all_until(int fd, void* data, size_t bytes, Clock::time_point deadline, int* err) {
  char* p = static_cast<char*>(data);
  while (bytes > 0) {
    ssize_t n = ::recv(fd, p, bytes, 0);
    if (n > 0) {
      p += n;
      bytes -= static_cast<size_t>(n);
      continue;
    }
    if (n == 0) {
      *err = 0;
      return false;
    }
    if (errno == EINTR) continue;
    if (errno != EAGAIN && errno != EWOULDBLOCK) {
      *err = errno;
      return false;
    }
    if (!poll_until(fd, POLLIN, deadline)) {
      *err = ETIMEDOUT;
      return false;
    }
  }
  return true;
}

}  // namespace kolo::transport::tcp
