// Settings of the TCP transport; filled by Config::FromEnv (see docs/config.md).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>

namespace kolo::transport::tcp {

struct TcpOptions {
  // Network interface whose IPv4 address this rank listens on and publishes
  // (KOLO_IFACE). Empty: use `address`, else the address that routes to
  // `route_hint`, else the first non-loopback IPv4 interface, else 127.0.0.1.
  std::string iface;
  // Explicit address to listen on and publish (KOLO_ADDRESS).
  std::string address;
  // Host whose route picks the interface when neither of the above is set;
  // normally the rendezvous server's host.
  std::string route_hint;
  // How long to keep retrying connections and waiting for peers to publish
  // their addresses while the mesh is built (KOLO_CONNECT_TIMEOUT_SECONDS).
  std::chrono::milliseconds connect_timeout{std::chrono::seconds(60)};
  // Longest wait for any single send or receive before it fails naming the
  // peer (KOLO_TIMEOUT_SECONDS).
  std::chrono::milliseconds op_timeout{std::chrono::seconds(300)};
  // SO_SNDBUF / SO_RCVBUF requested for data connections
  // (KOLO_SOCKET_BUFFER_BYTES); 0 leaves the kernel's autotuning alone.
  size_t socket_buffer_bytes = 4u << 20;
};

}  // namespace kolo::transport::tcp
