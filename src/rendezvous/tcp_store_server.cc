#include "rendezvous/tcp_store_server.h"

#include <fmt/format.h>
#include <poll.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <map>
#include <thread>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/logging.h"
#include "rendezvous/memory_store.h"
#include "rendezvous/store_server_connection.h"

namespace kolo::rendezvous {
namespace {

using net::Clock;

// How long a rejected client gets to read our last word before we close.
constexpr std::chrono::milliseconds kCloseLinger{2'000};
// Pause after accept() fails for lack of resources, instead of spinning.
constexpr std::chrono::milliseconds kAcceptBackoff{100};
// Rejected connections are logged once per kind of problem per interval.
constexpr std::chrono::milliseconds kLogInterval{5'000};

struct ParkedWait {
  uint64_t connection_id;
  uint64_t request_seq;
  std::vector<std::string> keys;
  std::chrono::milliseconds timeout;
  Clock::time_point deadline;
};

}  // namespace

class TcpStoreServer::Loop {
 public:
  explicit Loop(TcpStoreServerOptions options)
      : options_(std::move(options)),
        listener_(net::listen_tcp(options_.bind_address, options_.port, options_.listen_backlog)),
        port_(net::local_port(listener_.get())) {}

  ~Loop() {
    stopping_.store(true);
    wakeup_.notify();
    if (thread_.joinable()) thread_.join();
  }

  void start() {
    thread_ = std::thread([this] { run(); });
  }
  uint16_t port() const { return port_; }

 private:
  void run();
  void poll_once();
  Clock::time_point next_deadline() const;
  void accept_all();
  void serve(uint64_t id, ServerConnection& connection);
  void execute(uint64_t id, ServerConnection& connection, ServerConnection::Incoming incoming);
  void wake_waiters(const std::string& changed_key);
  void expire_waiters(Clock::time_point now);
  void reply_to_waiter(const ParkedWait& wait, bool satisfied);
  void drop_closed_connections();

  const TcpStoreServerOptions options_;
  UniqueFd listener_;
  const uint16_t port_;
  net::WakeupFd wakeup_;
  std::atomic<bool> stopping_{false};
  std::thread thread_;

  // Everything below is touched only by the server thread.
  LogLimiter log_{kLogInterval};  // before the connections, which point at it
  MemoryStore data_;
  std::map<uint64_t, std::unique_ptr<ServerConnection>> connections_;
  uint64_t next_connection_id_ = 1;
  std::vector<ParkedWait> waits_;
  Clock::time_point accept_resume_{};
};

TcpStoreServer::TcpStoreServer(TcpStoreServerOptions options) {
  if (options.secret.empty())
    throw InvalidArgument("TcpStoreServer needs the job secret (KOLO_SECRET); got an empty one");
  if (options.max_frame_bytes < wire::kMinMaxFrameBytes)
    throw InvalidArgument("TcpStoreServer max_frame_bytes must be at least " +
                          std::to_string(wire::kMinMaxFrameBytes));
  loop_ = std::make_unique<Loop>(std::move(options));
  port_ = loop_->port();
  loop_->start();
}

// Defined here, where Loop is complete.
TcpStoreServer::~TcpStoreServer() = default;

void TcpStoreServer::Loop::run() {
  while (!stopping_.load()) {
    try {
      poll_once();
    } catch (const std::exception& e) {
      // The loop serves every client; one failure must not end it.
      KOLO_LOG_ERROR("rendezvous server: event loop error: {}", e.what());
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  KOLO_LOG_DEBUG("rendezvous server on port {} stopped ({} connections closed)", port_,
                 connections_.size());
}

Clock::time_point TcpStoreServer::Loop::next_deadline() const {
  auto next = Clock::now() + std::chrono::seconds(10);
  for (const auto& wait : waits_) next = std::min(next, wait.deadline);
  for (const auto& [id, connection] : connections_)
    if (auto due = connection->deadline()) next = std::min(next, *due);
  if (accept_resume_ > Clock::now()) next = std::min(next, accept_resume_);
  if (auto flush = log_.next_flush()) next = std::min(next, *flush);
  return next;
}

void TcpStoreServer::Loop::poll_once() {
  std::vector<pollfd> fds;
  std::vector<uint64_t> ids;  // connection id of fds[i + 2]
  fds.push_back({wakeup_.fd(), POLLIN, 0});
  bool accepting = Clock::now() >= accept_resume_;
  fds.push_back({accepting ? listener_.get() : -1, POLLIN, 0});  // fd -1: ignored by poll
  for (const auto& [id, connection] : connections_) {
    short events = static_cast<short>((connection->wants_read() ? POLLIN : 0) |
                                      (connection->wants_write() ? POLLOUT : 0));
    fds.push_back({connection->fd(), events, 0});
    ids.push_back(id);
  }
  int ready = ::poll(fds.data(), fds.size(), net::poll_timeout_ms(next_deadline()));
  if (ready < 0 && errno != EINTR) throw IoError("poll failed: " + errno_text(errno));
  if (ready > 0) {
    if (fds[0].revents != 0) wakeup_.drain();
    if (stopping_.load()) return;
    for (size_t i = 0; i < ids.size(); ++i) {
      short revents = fds[i + 2].revents;
      auto it = connections_.find(ids[i]);
      if (revents == 0 || it == connections_.end()) continue;
      ServerConnection& connection = *it->second;
      if (revents & (POLLIN | POLLHUP | POLLERR)) connection.on_readable();
      if ((revents & POLLOUT) && !connection.closed()) connection.on_writable();
      serve(ids[i], connection);
    }
    if (fds[1].revents != 0) accept_all();
  }
  Clock::time_point now = Clock::now();
  log_.flush(now);
  expire_waiters(now);
  for (auto& [id, connection] : connections_) connection->on_deadline(now);
  drop_closed_connections();
}

void TcpStoreServer::Loop::accept_all() {
  while (true) {
    sockaddr_storage address{};
    socklen_t length = sizeof address;
    int fd = ::accept4(listener_.get(), reinterpret_cast<sockaddr*>(&address), &length,
                       SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EAGAIN || errno == EWOULDBLOCK) return;
      if (errno == EINTR || errno == ECONNABORTED) continue;
      log_.report(LogLevel::kWarning, "accept failed",
                  fmt::format("rendezvous server: accept failed: {}; pausing for {} ms",
                              errno_text(errno), kAcceptBackoff.count()));
      accept_resume_ = Clock::now() + kAcceptBackoff;
      return;
    }
    net::set_no_delay(fd);
    std::string peer = net::describe_address(address, length);
    ServerConnection::Settings settings{options_.secret, options_.max_frame_bytes,
                                        options_.handshake_timeout, kCloseLinger, &log_};
    uint64_t id = next_connection_id_++;
    auto connection = std::make_unique<ServerConnection>(UniqueFd(fd), peer, settings);
    KOLO_LOG_DEBUG("rendezvous server: connection {} from {}", id, peer);
    connections_.emplace(id, std::move(connection));
  }
}

void TcpStoreServer::Loop::serve(uint64_t id, ServerConnection& connection) {
  while (auto incoming = connection.next_request()) execute(id, connection, std::move(*incoming));
}

void TcpStoreServer::Loop::execute(uint64_t id, ServerConnection& connection,
                                   ServerConnection::Incoming incoming) {
  wire::Request& request = incoming.request;
  wire::Reply reply;
  std::optional<std::string> changed_key;
  try {
    switch (request.opcode) {
      case wire::Opcode::kPing:
      case wire::Opcode::kReply:
        break;
      case wire::Opcode::kSet:
        data_.set(request.key, request.value);
        changed_key = request.key;
        break;
      case wire::Opcode::kGet:
        reply.value = data_.get(request.key);
        break;
      case wire::Opcode::kAdd:
        reply.number = data_.add(request.key, request.delta);
        changed_key = request.key;
        break;
      case wire::Opcode::kCompareSet: {
        auto result = data_.compare_set(request.key, request.expected, request.value);
        reply.flag = result.swapped;
        reply.value = std::move(result.current);
        if (result.swapped) changed_key = request.key;
        break;
      }
      case wire::Opcode::kRemove:
        reply.flag = data_.remove(request.key);
        break;
      case wire::Opcode::kWait: {
        auto missing = data_.missing(request.keys);
        if (missing.empty()) break;
        std::chrono::milliseconds timeout(request.timeout_ms);
        if (timeout.count() == 0) {
          connection.send_error(incoming.seq, StatusCode::kTimeout,
                                wait_timeout_message(timeout, missing));
          return;
        }
        // Parked: the answer comes from wake_waiters or expire_waiters.
        waits_.push_back(
            {id, incoming.seq, std::move(request.keys), timeout, Clock::now() + timeout});
        return;
      }
    }
  } catch (const Error& e) {
    connection.send_error(incoming.seq, e.code(), e.what());
    return;
  }
  connection.send_reply(incoming.seq, StatusCode::kOk, wire::encode_reply(request.opcode, reply));
  if (changed_key) wake_waiters(*changed_key);
}

void TcpStoreServer::Loop::wake_waiters(const std::string& changed_key) {
  std::erase_if(waits_, [&](const ParkedWait& wait) {
    if (std::find(wait.keys.begin(), wait.keys.end(), changed_key) == wait.keys.end()) return false;
    if (!data_.missing(wait.keys).empty()) return false;
    reply_to_waiter(wait, /*satisfied=*/true);
    return true;
  });
}

void TcpStoreServer::Loop::expire_waiters(Clock::time_point now) {
  std::erase_if(waits_, [&](const ParkedWait& wait) {
    if (wait.deadline > now) return false;
    reply_to_waiter(wait, /*satisfied=*/false);
    return true;
  });
}

void TcpStoreServer::Loop::reply_to_waiter(const ParkedWait& wait, bool satisfied) {
  auto it = connections_.find(wait.connection_id);
  if (it == connections_.end()) return;
  if (satisfied)
    it->second->send_reply(wait.request_seq, StatusCode::kOk, {});
  else
    it->second->send_error(wait.request_seq, StatusCode::kTimeout,
                           wait_timeout_message(wait.timeout, data_.missing(wait.keys)));
}

void TcpStoreServer::Loop::drop_closed_connections() {
  for (auto it = connections_.begin(); it != connections_.end();) {
    if (!it->second->closed()) {
      ++it;
      continue;
    }
    uint64_t id = it->first;
    std::erase_if(waits_, [id](const ParkedWait& wait) { return wait.connection_id == id; });
    KOLO_LOG_DEBUG("rendezvous server: connection {} from {} closed", id, it->second->peer());
    it = connections_.erase(it);
  }
}

}  // namespace kolo::rendezvous
