#include "raw_store_peer.h"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <stdexcept>

namespace kolo::rendezvous::testing {

using net::Clock;

TcpStoreClientOptions client_options(uint16_t port, std::string secret) {
  TcpStoreClientOptions options;
  options.host = "127.0.0.1";
  options.port = port;
  options.secret = std::move(secret);
  options.connect_timeout = std::chrono::milliseconds(5'000);
  options.io_timeout = std::chrono::milliseconds(5'000);
  return options;
}

TcpStoreServerOptions server_options(std::string secret) {
  TcpStoreServerOptions options;
  options.bind_address = "127.0.0.1";
  options.secret = std::move(secret);
  return options;
}

int64_t elapsed_ms(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
                                                               start)
      .count();
}

RawClient::RawClient(uint16_t port)
    : fd_(net::connect_tcp("127.0.0.1", port, Clock::now() + std::chrono::seconds(5))) {
  server_hello_.resize(wire::kHelloBytes);
  net::recv_exact(fd_.get(), server_hello_, Clock::now() + std::chrono::seconds(5));
}

void RawClient::handshake(const std::string& secret) {
  auto server = wire::decode_hello(server_hello_);
  if (!server) throw std::runtime_error("bad server hello: " + server.error);
  Nonce nonce = random_nonce();
  send(wire::encode_hello({wire::Role::kClient, wire::kVersion, nonce}));
  keys_ = derive_session_keys(secret, server.value->nonce, nonce);
}

void RawClient::send(std::span<const uint8_t> bytes) {
  net::send_all(fd_.get(), bytes, Clock::now() + std::chrono::seconds(5));
}

wire::FrameHeader RawClient::send_request(const wire::Request& request) {
  wire::FrameHeader header;
  header.opcode = request.opcode;
  header.seq = next_seq_++;
  send(wire::encode_frame(header, wire::encode_request(request), keys_.client_to_server));
  return header;
}

bool RawClient::read_more(Clock::time_point deadline) {
  uint8_t chunk[4096];
  while (true) {
    pollfd p{fd_.get(), POLLIN, 0};
    int rc = ::poll(&p, 1, net::poll_timeout_ms(deadline));
    if (rc == 0) return false;
    if (rc < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, 0);
    if (n > 0) {
      in_.insert(in_.end(), chunk, chunk + n);
      return true;
    }
    if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
    return false;  // EOF or reset
  }
}

std::optional<wire::SplitFrame> RawClient::read_frame(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  while (true) {
    auto frame = wire::split_frame(in_, wire::kDefaultMaxFrameBytes);
    if (frame.status == wire::SplitFrame::Status::kFrame) {
      // Keep the bytes alive for the spans in the returned frame.
      frame_storage_.assign(in_.begin(), in_.begin() + static_cast<ptrdiff_t>(frame.frame_bytes));
      in_.erase(in_.begin(), in_.begin() + static_cast<ptrdiff_t>(frame.frame_bytes));
      return wire::split_frame(frame_storage_, wire::kDefaultMaxFrameBytes);
    }
    if (frame.status == wire::SplitFrame::Status::kError) return std::nullopt;
    if (!read_more(deadline)) return std::nullopt;
  }
}

bool RawClient::closed_within(std::chrono::milliseconds timeout) {
  auto deadline = Clock::now() + timeout;
  uint8_t chunk[4096];
  while (Clock::now() < deadline) {
    pollfd p{fd_.get(), POLLIN, 0};
    int rc = ::poll(&p, 1, net::poll_timeout_ms(deadline));
    if (rc <= 0) continue;
    ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, 0);
    if (n == 0) return true;
    if (n < 0 && errno != EINTR && errno != EAGAIN) return true;  // reset counts as closed
  }
  return false;
}

}  // namespace kolo::rendezvous::testing
