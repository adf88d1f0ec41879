// Test helpers that speak the store protocol by hand, to play a hostile or
// broken client (or server) against the real TcpStoreServer / TcpStoreClient.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "rendezvous/socket_util.h"
#include "rendezvous/store_wire.h"
#include "rendezvous/tcp_store_client.h"
#include "rendezvous/tcp_store_server.h"

namespace kolo::rendezvous::testing {

inline const std::string kSecret = "0123456789abcdef-test-secret";

// Short timeouts so a failing test fails in seconds, not minutes.
TcpStoreClientOptions client_options(uint16_t port, std::string secret = kSecret);
TcpStoreServerOptions server_options(std::string secret = kSecret);

// A client socket to the server that can do the protocol right or wrong.
class RawClient {
 public:
  explicit RawClient(uint16_t port);

  // Reads the server's hello, sends ours and derives the session keys.
  void handshake(const std::string& secret = kSecret);
  void send(std::span<const uint8_t> bytes);
  // A correctly signed request frame with the next sequence number.
  wire::FrameHeader send_request(const wire::Request& request);

  // The next frame from the server, or nullopt if it closed first.
  std::optional<wire::SplitFrame> read_frame(std::chrono::milliseconds timeout);
  // True if the server closes the connection within `timeout`.
  bool closed_within(std::chrono::milliseconds timeout);

  const SessionKeys& keys() const { return keys_; }
  int fd() const { return fd_.get(); }

 private:
  // Reads more bytes into in_; false on EOF or error or timeout.
  bool read_more(net::Clock::time_point deadline);

  UniqueFd fd_;
  Bytes server_hello_;
  SessionKeys keys_{};
  uint64_t next_seq_ = 0;
  Bytes in_;
  Bytes frame_storage_;
};

// Milliseconds since `start`, for "finished quickly" checks.
int64_t elapsed_ms(std::chrono::steady_clock::time_point start);

}  // namespace kolo::rendezvous::testing
