#include "rendezvous/store_server_connection.h"

#include <fmt/format.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>

#include "common/errno_text.h"
#include "common/logging.h"

namespace kolo::rendezvous {
namespace {

// Read in chunks; the buffer grows by what arrives, never by what a header claims.
constexpr size_t kReadChunkBytes = 64 * 1024;
// Past this much unsent output, stop taking requests until the client reads.
constexpr size_t kOutputHighWaterBytes = 4 * 1024 * 1024;
// Until a peer has shown it holds the secret, its frames may be this big at
// most (our client opens with a tiny PING), so strangers cannot make the
// server buffer max_frame_bytes per connection.
constexpr size_t kUnauthenticatedFrameLimit = 4096;

}  // namespace

ServerConnection::ServerConnection(UniqueFd fd, std::string peer, const Settings& settings)
    : fd_(std::move(fd)),
      peer_(std::move(peer)),
      settings_(settings),
      server_nonce_(random_nonce()),
      deadline_(net::Clock::now() + settings.handshake_timeout) {
  // The client needs our nonce before it can sign anything.
  Bytes hello = wire::encode_hello({wire::Role::kServer, wire::kVersion, server_nonce_});
  out_.insert(out_.end(), hello.begin(), hello.end());
  flush();
}

bool ServerConnection::wants_read() const {
  if (state_ == State::kClosed) return false;
  if (state_ == State::kClosing) return true;  // drain until the peer's EOF
  return out_.size() - out_pos_ < kOutputHighWaterBytes;
}

bool ServerConnection::wants_write() const {
  return state_ != State::kClosed && out_pos_ < out_.size();
}

std::optional<net::Clock::time_point> ServerConnection::deadline() const {
  bool handshaking = state_ == State::kAwaitingHello || (state_ == State::kOpen && !authenticated_);
  if (handshaking || state_ == State::kClosing) return deadline_;
  return std::nullopt;
}

size_t ServerConnection::frame_limit() const {
  return authenticated_ ? settings_.max_frame_bytes
                        : std::min(settings_.max_frame_bytes, kUnauthenticatedFrameLimit);
}

void ServerConnection::on_readable() {
  if (in_pos_ > 0) {  // compact before growing
    in_.erase(in_.begin(), in_.begin() + static_cast<ptrdiff_t>(in_pos_));
    in_pos_ = 0;
  }
  uint8_t chunk[kReadChunkBytes];
  // Bounded per wake-up so one busy client cannot starve the others.
  for (int round = 0; round < 16 && state_ != State::kClosed; ++round) {
    ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, 0);
    if (n > 0) {
      // While closing, input is read only to see the peer's EOF.
      if (state_ != State::kClosing) in_.insert(in_.end(), chunk, chunk + n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    if (n < 0 && state_ != State::kClosing)
      KOLO_LOG_DEBUG("rendezvous server: connection from {} failed: {}", peer_, errno_text(errno));
    close_now();  // EOF or error
  }
}

void ServerConnection::on_writable() {
  flush();
}

void ServerConnection::on_deadline(net::Clock::time_point now) {
  auto due = deadline();
  if (!due || now < *due) return;
  if (state_ != State::kClosing) {
    const char* missing = state_ == State::kAwaitingHello ? "hello" : "authenticated request";
    settings_.log->report(
        LogLevel::kWarning, fmt::format("no {}", missing),
        fmt::format("rendezvous server: closing connection from {}: no {} within {} ms", peer_,
                    missing, settings_.handshake_timeout.count()));
  }
  close_now();
}

std::span<const uint8_t> ServerConnection::unread() const {
  return std::span<const uint8_t>(in_).subspan(in_pos_);
}

void ServerConnection::consume(size_t bytes) {
  in_pos_ += bytes;
}

void ServerConnection::process_hello() {
  if (unread().size() < wire::kHelloBytes) return;
  auto hello = wire::decode_hello(unread().first(wire::kHelloBytes));
  if (!hello) {
    settings_.log->report(
        LogLevel::kWarning, hello.error,
        fmt::format("rendezvous server: closing connection from {}: {}", peer_, hello.error));
    close_now();
    return;
  }
  if (hello.value->role != wire::Role::kClient || hello.value->version != wire::kVersion) {
    settings_.log->report(
        LogLevel::kWarning, "hello of another role or version",
        fmt::format("rendezvous server: closing connection from {}: hello is from a {} of "
                    "protocol version {}, expected a client of version {}",
                    peer_, hello.value->role == wire::Role::kServer ? "server" : "client",
                    hello.value->version, wire::kVersion));
    close_now();
    return;
  }
  consume(wire::kHelloBytes);
  keys_ = derive_session_keys(settings_.secret, server_nonce_, hello.value->nonce);
  state_ = State::kOpen;
}

std::optional<ServerConnection::Incoming> ServerConnection::next_request() {
  if (state_ == State::kAwaitingHello) process_hello();
  while (state_ == State::kOpen && out_.size() - out_pos_ < kOutputHighWaterBytes) {
    wire::SplitFrame frame = wire::split_frame(unread(), frame_limit());
    if (frame.status == wire::SplitFrame::Status::kNeedMore) return std::nullopt;
    if (frame.status == wire::SplitFrame::Status::kError) {
      // Oversized or garbled: the stream cannot be resynchronised. Say why if
      // the header was readable enough to have a sequence number.
      std::optional<uint64_t> seq;
      if (unread().size() >= wire::kHeaderBytes) {
        auto header = wire::decode_frame_header(unread(), SIZE_MAX);
        if (header) seq = header.value->seq;
      }
      reject("malformed frame: " + frame.error, seq, StatusCode::kInvalidArgument);
      return std::nullopt;
    }
    if (!wire::frame_mac_valid(keys_.client_to_server, frame)) {
      reject("request failed HMAC authentication (wrong KOLO_SECRET?)", frame.header.seq,
             StatusCode::kUnauthenticated);
      return std::nullopt;
    }
    authenticated_ = true;
    const wire::FrameHeader& header = frame.header;
    if (header.seq != next_recv_seq_ || !wire::is_request_opcode(header.opcode)) {
      reject("out-of-sequence or non-request frame (seq " + std::to_string(header.seq) +
                 ", expected " + std::to_string(next_recv_seq_) + ")",
             std::nullopt, StatusCode::kInvalidArgument);
      return std::nullopt;
    }
    ++next_recv_seq_;
    auto request = wire::decode_request(header.opcode, frame.payload);
    consume(frame.frame_bytes);
    if (!request) {
      // Authenticated but undecodable: a client bug, not an attack. The
      // framing is intact, so answer and carry on.
      send_error(header.seq, StatusCode::kInvalidArgument,
                 std::string("malformed ") + wire::opcode_name(header.opcode) +
                     " request: " + request.error);
      continue;
    }
    return Incoming{header.seq, std::move(*request.value)};
  }
  return std::nullopt;
}

void ServerConnection::reject(const std::string& why, std::optional<uint64_t> reply_to,
                              StatusCode status) {
  settings_.log->report(
      LogLevel::kWarning, why,
      fmt::format("rendezvous server: rejected connection from {}: {}; closing it", peer_, why));
  // Sent even after a failed MAC: the client cannot verify it (that is the
  // point), but it can tell "you were rejected" from "the server vanished".
  send_error(reply_to.value_or(0), status, why);
  start_closing();
}

void ServerConnection::send_reply(uint64_t reply_to, StatusCode status,
                                  std::span<const uint8_t> payload) {
  if (state_ != State::kOpen) return;
  wire::FrameHeader header;
  header.opcode = wire::Opcode::kReply;
  header.status = status;
  header.seq = next_send_seq_++;
  header.reply_to = reply_to;
  Bytes frame = wire::encode_frame(header, payload, keys_.server_to_client);
  out_.insert(out_.end(), frame.begin(), frame.end());
  flush();
}

void ServerConnection::send_error(uint64_t reply_to, StatusCode status,
                                  const std::string& message) {
  send_reply(reply_to, status, to_bytes(message));
}

void ServerConnection::start_closing() {
  if (state_ == State::kClosed || state_ == State::kClosing) return;
  state_ = State::kClosing;
  in_.clear();
  in_pos_ = 0;
  deadline_ = net::Clock::now() + settings_.close_linger;
  flush();
}

void ServerConnection::close_now() {
  state_ = State::kClosed;
  fd_.reset();
}

void ServerConnection::flush() {
  while (out_pos_ < out_.size() && state_ != State::kClosed) {
    ssize_t n = ::send(fd_.get(), out_.data() + out_pos_, out_.size() - out_pos_, MSG_NOSIGNAL);
    if (n > 0) {
      out_pos_ += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    close_now();  // the peer is gone; nothing more to say to it
    return;
  }
  if (out_pos_ == out_.size()) {
    out_.clear();
    out_pos_ = 0;
  }
  // Half-close once the last word is out, so the peer reads it before EOF
  // (closing with unread input could reset the connection and lose it).
  if (state_ == State::kClosing && out_.empty() && !write_shut_) {
    ::shutdown(fd_.get(), SHUT_WR);
    write_shut_ = true;
  }
}

}  // namespace kolo::rendezvous
