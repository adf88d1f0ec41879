// Thin POSIX socket helpers for the TCP transport: the socket options every data connection
// gets, and deadline-bounded blocking I/O for the mesh bootstrap. The data path itself
// (tcp_core.cc) uses non-blocking sockets driven by epoll and only borrows
// set_data_socket_options().
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "common/unique_fd.h"

namespace kolo::transport::tcp {

using Clock = std::chrono::steady_clock;

// errno_text(err), except that 0 (how the I/O helpers below and the data path report EOF)
// reads "connection closed by peer".
std::string connection_error_text(int err);

void set_nonblocking(int fd, bool on);
// TCP_NODELAY (collectives send many small messages whose latency matters
// more than segment count), keepalive (detects a vanished host on an idle
// connection), and the socket buffer sizes from TcpOptions.
void set_data_socket_options(int fd, size_t buffer_bytes);
// Buffer sizes must be set before listen()/connect() so the TCP window scale
// is negotiated for them; see the .cc for why we may leave them alone.
void set_socket_buffers(int fd, size_t buffer_bytes);

// Listens on `ipv4`, port chosen by the kernel. Returns the socket and port.
// `congestion` (congestion.h; empty: the host's default) is inherited by the
// connections it accepts.
UniqueFd listen_on(const std::string& ipv4, int backlog, size_t buffer_bytes,
                   const std::string& congestion, int* port);

// One connection attempt to ipv4:port that gives up at `deadline`, with the
// congestion control `congestion` (empty: the host's default). Returns an
// invalid UniqueFd and sets *err on failure (the caller retries with backoff).
UniqueFd try_connect(const std::string& ipv4, int port, size_t buffer_bytes,
                     const std::string& congestion, Clock::time_point deadline, int* err);

// Waits for a connection on `listener` until `deadline`; invalid UniqueFd on timeout.
UniqueFd accept_until(int listener, Clock::time_point deadline);

// Blocking exact reads/writes on a non-blocking socket, bounded by
// `deadline`. Return false on timeout, EOF or error (*err says which:
// ETIMEDOUT, 0 for EOF, else errno).
bool write_all_until(int fd, const void* data, size_t bytes, Clock::time_point deadline, int* err);
bool read_all_until(int fd, void* data, size_t bytes, Clock::time_point deadline, int* err);

}  // namespace kolo::transport::tcp
