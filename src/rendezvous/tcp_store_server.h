// TcpStoreServer: the rendezvous store the launcher hosts for a job. One
// thread runs a poll() loop over non-blocking sockets with per-connection
// buffers, so no client, slow or hostile, can stall the others. WAIT
// requests are parked in the server and answered when their keys appear
// (after SET, ADD or COMPARE_SET) or with a TimeoutError naming the missing
// keys when their deadline passes. Every frame is authenticated with the
// job secret (see store_wire.h for the protocol).
//
// Thread model: the constructor binds and listens (so port() is valid at
// once and bind errors throw IoError there) and starts the thread; the
// destructor wakes the loop, joins it and closes every connection, which the
// clients see as IoError.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>

#include "rendezvous/store_wire.h"

namespace kolo::rendezvous {

struct TcpStoreServerOptions {
  std::string bind_address = "0.0.0.0";
  uint16_t port = 0;   // 0: an ephemeral port; see TcpStoreServer::port()
  std::string secret;  // the job secret (KOLO_SECRET); required
  // Largest frame (header + payload + MAC) accepted; bigger ones close the
  // connection before their payload is buffered.
  size_t max_frame_bytes = wire::kDefaultMaxFrameBytes;
  // A connection that has not sent its hello and a first authenticated
  // request by then is dropped.
  std::chrono::milliseconds handshake_timeout{10'000};
  int listen_backlog = 1024;
};

class TcpStoreServer {
 public:
  explicit TcpStoreServer(TcpStoreServerOptions options);
  ~TcpStoreServer();
  TcpStoreServer(const TcpStoreServer&) = delete;
  TcpStoreServer& operator=(const TcpStoreServer&) = delete;

  uint16_t port() const { return port_; }

 private:
  class Loop;
  std::unique_ptr<Loop> loop_;
  uint16_t port_ = 0;
};

}  // namespace kolo::rendezvous
