#include "rendezvous/tcp_store_client.h"

#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <limits>

#include "common/errno_text.h"
#include "common/error.h"

namespace kolo::rendezvous {
namespace {

using net::Clock;

constexpr std::chrono::milliseconds kFirstBackoff{20};
constexpr std::chrono::milliseconds kMaxBackoff{1'000};
constexpr size_t kReadChunkBytes = 64 * 1024;

// The wire carries wait timeouts as u32 milliseconds (about 49 days).
uint32_t wire_timeout_ms(std::chrono::milliseconds timeout) {
  return static_cast<uint32_t>(
      std::clamp<int64_t>(timeout.count(), 0, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

TcpStoreClient::TcpStoreClient(TcpStoreClientOptions options)
    : options_(std::move(options)),
      server_name_(options_.host + ":" + std::to_string(options_.port)) {
  if (options_.secret.empty())
    throw InvalidArgument("TcpStoreClient for " + server_name_ +
                          " needs the job secret (KOLO_SECRET); got an empty one");
  if (options_.port == 0) throw InvalidArgument("TcpStoreClient needs the server's port, got 0");
  if (options_.max_frame_bytes < wire::kMinMaxFrameBytes)
    throw InvalidArgument("TcpStoreClient max_frame_bytes must be at least " +
                          std::to_string(wire::kMinMaxFrameBytes));
  connect_with_retry();
  reader_ = std::thread([this] { read_replies(); });
  try {
    call(wire::Request{}, options_.io_timeout);  // PING: a wrong secret fails here, not later
  } catch (...) {
    stop_reader_.notify();
    reader_.join();
    throw;
  }
}

TcpStoreClient::~TcpStoreClient() {
  stop_reader_.notify();
  if (reader_.joinable()) reader_.join();
}

void TcpStoreClient::connect_with_retry() {
  const auto deadline = Clock::now() + options_.connect_timeout;
  auto backoff = kFirstBackoff;
  std::string last_error;
  while (true) {
    try {
      fd_ = net::connect_tcp(options_.host, options_.port, deadline);
      handshake(deadline);
      return;
    } catch (const IoError& e) {  // refused, reset, closed: the server may not be up yet
      last_error = e.what();
    } catch (const TimeoutError& e) {
      last_error = e.what();
    }
    fd_.reset();
    if (Clock::now() + backoff >= deadline)
      throw TimeoutError("could not connect to rendezvous server " + server_name_ + " within " +
                         std::to_string(options_.connect_timeout.count()) +
                         " ms (last error: " + last_error + ")");
    std::this_thread::sleep_for(backoff);
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

void TcpStoreClient::handshake(Clock::time_point deadline) {
  Nonce client_nonce = random_nonce();
  Bytes hello = wire::encode_hello({wire::Role::kClient, wire::kVersion, client_nonce});
  net::send_all(fd_.get(), hello, deadline);
  Bytes reply(wire::kHelloBytes);
  net::recv_exact(fd_.get(), reply, deadline);
  auto server = wire::decode_hello(reply);
  std::string problem;
  if (!server)
    problem = server.error;
  else if (server.value->role != wire::Role::kServer)
    problem = "the peer is not a server";
  else if (server.value->version != wire::kVersion)
    problem = "it speaks store protocol version " + std::to_string(server.value->version) +
              ", we speak " + std::to_string(wire::kVersion);
  // Not a transient failure: retrying would only delay the same answer.
  if (!problem.empty())
    throw InvalidArgument("rendezvous server " + server_name_ + " is not usable: " + problem);
  keys_ = derive_session_keys(options_.secret, server.value->nonce, client_nonce);
}

wire::Reply TcpStoreClient::call(const wire::Request& request,
                                 std::chrono::milliseconds reply_timeout) {
  Bytes payload = wire::encode_request(request);
  if (payload.size() + wire::kFrameOverheadBytes > options_.max_frame_bytes)
    throw InvalidArgument(std::string("store ") + wire::opcode_name(request.opcode) + " of key '" +
                          request.key + "' needs a frame of " +
                          std::to_string(payload.size() + wire::kFrameOverheadBytes) +
                          " bytes, over the limit of " + std::to_string(options_.max_frame_bytes));
  std::map<uint64_t, Pending>::iterator mine;
  {
    std::lock_guard write_lock(write_mutex_);
    wire::FrameHeader header;
    header.opcode = request.opcode;
    {
      std::lock_guard lock(mutex_);
      if (failure_) throw_failure(*failure_);
      header.seq = next_send_seq_++;
      mine = pending_.emplace(header.seq, Pending{}).first;
    }
    Bytes frame = wire::encode_frame(header, payload, keys_.client_to_server);
    try {
      net::send_all(fd_.get(), frame, Clock::now() + options_.io_timeout);
    } catch (const Error& e) {
      // A half-sent frame leaves the stream unusable: the failure is final.
      fail(StatusCode::kIoError, "lost connection to rendezvous server " + server_name_ +
                                     ": sending " + wire::opcode_name(request.opcode) + ": " +
                                     e.what());
    }
  }
  std::unique_lock lock(mutex_);
  replied_.wait_for(lock, reply_timeout, [&] { return mine->second.done || failure_.has_value(); });
  Pending result = std::move(mine->second);
  pending_.erase(mine);
  if (!result.done) {
    if (failure_) throw_failure(*failure_);
    throw TimeoutError("rendezvous server " + server_name_ + " did not answer " +
                       wire::opcode_name(request.opcode) + " within " +
                       std::to_string(reply_timeout.count()) + " ms");
  }
  lock.unlock();
  if (result.status != StatusCode::kOk) throw_reply_error(result.status, to_string(result.payload));
  auto reply = wire::decode_reply(request.opcode, result.payload);
  if (!reply)
    throw IoError("malformed " + std::string(wire::opcode_name(request.opcode)) +
                  " reply from rendezvous server " + server_name_ + ": " + reply.error);
  return std::move(*reply.value);
}

void TcpStoreClient::read_replies() {
  uint8_t chunk[kReadChunkBytes];
  while (true) {
    pollfd fds[2] = {{fd_.get(), POLLIN, 0}, {stop_reader_.fd(), POLLIN, 0}};
    // No timeout needed: the destructor wakes us, callers keep their own deadlines.
    int rc = ::poll(fds, 2, -1);
    if (rc < 0 && errno == EINTR) continue;
    if (fds[1].revents != 0) return;
    std::string lost;
    if (rc < 0) lost = "poll failed: " + errno_text(errno);
    while (lost.empty()) {
      ssize_t n = ::recv(fd_.get(), chunk, sizeof chunk, 0);
      if (n > 0) {
        in_.insert(in_.end(), chunk, chunk + n);
        continue;
      }
      if (n == 0)
        lost = "connection closed by the server";
      else if (errno == EAGAIN || errno == EWOULDBLOCK)
        break;
      else if (errno != EINTR)
        lost = errno_text(errno);
    }
    // Replies that arrived before an EOF still count.
    if (!dispatch_frames()) return;
    if (!lost.empty()) {
      fail(StatusCode::kIoError,
           "lost connection to rendezvous server " + server_name_ + ": " + lost);
      return;
    }
  }
}

bool TcpStoreClient::dispatch_frames() {
  size_t used = 0;
  bool healthy = true;
  while (healthy) {
    auto frame = wire::split_frame(std::span(in_).subspan(used), options_.max_frame_bytes);
    if (frame.status == wire::SplitFrame::Status::kNeedMore) break;
    healthy = false;
    if (frame.status == wire::SplitFrame::Status::kError) {
      fail(StatusCode::kIoError, "lost connection to rendezvous server " + server_name_ +
                                     ": malformed reply: " + frame.error);
    } else if (!wire::frame_mac_valid(keys_.server_to_client, frame)) {
      // The server's "rejected" reply is signed with the key we do not share,
      // so it cannot verify; its status still tells us what happened.
      bool rejected = frame.header.opcode == wire::Opcode::kReply &&
                      frame.header.status == StatusCode::kUnauthenticated;
      fail(StatusCode::kUnauthenticated,
           rejected ? "rendezvous server at " + server_name_ +
                          " rejected our credentials (wrong KOLO_SECRET?)"
                    : "reply from rendezvous server at " + server_name_ +
                          " failed HMAC authentication (wrong KOLO_SECRET, or not this job's "
                          "server?)");
    } else if (frame.header.opcode != wire::Opcode::kReply || frame.header.seq != next_recv_seq_) {
      fail(StatusCode::kIoError,
           "lost connection to rendezvous server " + server_name_ + ": reply out of sequence");
    } else {
      healthy = true;
      ++next_recv_seq_;
      {
        std::lock_guard lock(mutex_);
        // Absent when the caller already gave up waiting; the reply is dropped.
        auto it = pending_.find(frame.header.reply_to);
        if (it != pending_.end()) {
          it->second.done = true;
          it->second.status = frame.header.status;
          it->second.payload.assign(frame.payload.begin(), frame.payload.end());
        }
      }
      replied_.notify_all();
      used += frame.frame_bytes;
    }
  }
  in_.erase(in_.begin(), in_.begin() + static_cast<ptrdiff_t>(used));
  return healthy;
}

void TcpStoreClient::fail(StatusCode code, const std::string& message) {
  {
    std::lock_guard lock(mutex_);
    if (failure_) return;  // the first cause is the one worth reporting
    failure_ = Failure{code, message};
  }
  // Unblocks a writer stuck in send and the reader, if this came from a writer.
  ::shutdown(fd_.get(), SHUT_RDWR);
  replied_.notify_all();
}

void TcpStoreClient::throw_failure(const Failure& failure) const {
  if (failure.code == StatusCode::kUnauthenticated) throw AuthError(failure.message);
  throw IoError(failure.message);
}

void TcpStoreClient::throw_reply_error(StatusCode status, const std::string& message) const {
  switch (status) {
    case StatusCode::kInvalidArgument:
      throw InvalidArgument(message);
    case StatusCode::kTimeout:
      throw TimeoutError(message);
    case StatusCode::kAborted:
      throw AbortedError(message);
    case StatusCode::kUnauthenticated:
      throw AuthError(message);
    default:
      throw IoError("rendezvous server " + server_name_ + " failed a request: " + message);
  }
}

void TcpStoreClient::set(const std::string& key, const Bytes& value) {
  wire::Request r;
  r.opcode = wire::Opcode::kSet;
  r.key = key;
  r.value = value;
  call(r, options_.io_timeout);
}

std::optional<Bytes> TcpStoreClient::get(const std::string& key) {
  wire::Request r;
  r.opcode = wire::Opcode::kGet;
  r.key = key;
  return call(r, options_.io_timeout).value;
}

void TcpStoreClient::wait(const std::vector<std::string>& keys, std::chrono::milliseconds timeout) {
  wire::Request r;
  r.opcode = wire::Opcode::kWait;
  r.keys = keys;
  r.timeout_ms = wire_timeout_ms(timeout);
  // The server answers at its deadline; the margin covers the trip back.
  call(r, std::chrono::milliseconds(r.timeout_ms) + options_.io_timeout);
}

int64_t TcpStoreClient::add(const std::string& key, int64_t delta) {
  wire::Request r;
  r.opcode = wire::Opcode::kAdd;
  r.key = key;
  r.delta = delta;
  return call(r, options_.io_timeout).number;
}

CompareSetResult TcpStoreClient::compare_set(const std::string& key,
                                             const std::optional<Bytes>& expected,
                                             const Bytes& desired) {
  wire::Request r;
  r.opcode = wire::Opcode::kCompareSet;
  r.key = key;
  r.expected = expected;
  r.value = desired;
  wire::Reply reply = call(r, options_.io_timeout);
  return CompareSetResult{reply.flag, std::move(reply.value)};
}

bool TcpStoreClient::remove(const std::string& key) {
  wire::Request r;
  r.opcode = wire::Opcode::kRemove;
  r.key = key;
  return call(r, options_.io_timeout).flag;
}

}  // namespace kolo::rendezvous
