// ServerConnection: one client of TcpStoreServer, seen from the server
// thread. It owns the socket and its buffers, does the hello exchange, cuts
// the byte stream into frames, checks each frame's MAC and sequence number,
// and turns replies into frames. It knows nothing of the store itself.
//
// Bad input never throws: a protocol violation or failed MAC is logged with
// the peer's address, answered with an error reply where the peer can read
// one, and the connection moves to kClosing (flush, then close).
#pragma once

#include <optional>
#include <string>

#include "common/log_limiter.h"
#include "rendezvous/socket_util.h"
#include "rendezvous/store_wire.h"

namespace kolo::rendezvous {

class ServerConnection {
 public:
  enum class State { kAwaitingHello, kOpen, kClosing, kClosed };

  struct Settings {
    std::string_view secret;  // outlives the connection (owned by the server)
    size_t max_frame_bytes;
    std::chrono::milliseconds handshake_timeout;
    std::chrono::milliseconds close_linger;
    // Where rejections are logged: one line per kind of problem per
    // interval, so a flood of bad connections does not flood the log.
    LogLimiter* log;  // owned by the server, outlives the connection
  };

  ServerConnection(UniqueFd fd, std::string peer, const Settings& settings);

  int fd() const { return fd_.get(); }
  const std::string& peer() const { return peer_; }
  State state() const { return state_; }
  bool closed() const { return state_ == State::kClosed; }

  // poll() interest: stop reading while replies pile up unread (back-pressure
  // on a client that pipelines without reading).
  bool wants_read() const;
  bool wants_write() const;
  // Handshake or linger deadline, if one applies. The handshake lasts until
  // the first authenticated frame, so a peer without the secret cannot hold
  // a connection (or more than a small buffer) for long.
  std::optional<net::Clock::time_point> deadline() const;

  void on_readable();
  void on_writable();
  void on_deadline(net::Clock::time_point now);

  // The next authenticated, well-formed request buffered on this connection,
  // with its sequence number; nullopt when more bytes are needed or the
  // connection no longer accepts requests.
  struct Incoming {
    uint64_t seq;
    wire::Request request;
  };
  std::optional<Incoming> next_request();

  // Queues a reply to request `reply_to` and writes what the socket takes.
  void send_reply(uint64_t reply_to, StatusCode status, std::span<const uint8_t> payload);
  void send_error(uint64_t reply_to, StatusCode status, const std::string& message);

 private:
  void process_hello();
  std::span<const uint8_t> unread() const;
  size_t frame_limit() const;
  void consume(size_t bytes);
  void reject(const std::string& why, std::optional<uint64_t> reply_to, StatusCode status);
  void start_closing();
  void close_now();
  void flush();

  UniqueFd fd_;
  std::string peer_;
  Settings settings_;
  State state_ = State::kAwaitingHello;
  Nonce server_nonce_;
  SessionKeys keys_{};
  uint64_t next_recv_seq_ = 0;
  uint64_t next_send_seq_ = 0;
  Bytes in_;
  size_t in_pos_ = 0;  // bytes of in_ already consumed
  Bytes out_;
  size_t out_pos_ = 0;  // bytes of out_ already sent
  bool write_shut_ = false;
  bool authenticated_ = false;  // a frame with a valid MAC has arrived
  net::Clock::time_point deadline_;
};

}  // namespace kolo::rendezvous
