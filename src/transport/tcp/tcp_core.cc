// TcpCore: posting, waiting, and failure handling. The progress thread's
// half lives in progress.cc.
#include "transport/tcp/tcp_core.h"

#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <unistd.h>

#include <cstring>

#include "common/check.h"
#include "common/errno_text.h"
#include "common/error.h"
#include "common/logging.h"

namespace kolo::transport::tcp {

namespace {

constexpr uint64_t kWakeId = ~uint64_t{0};
// How long a destroyed context tries to deliver its GOODBYE frames.
constexpr auto kGoodbyeGrace = std::chrono::seconds(2);

std::vector<std::string> peer_names(const std::vector<std::string>& hosts) {
  std::vector<std::string> names;
  for (size_t r = 0; r < hosts.size(); ++r)
    names.push_back(fmt::format("rank {} (host {})", r, hosts[r]));
  return names;
}

const char* verb(const Operation& op) {
  return op.kind == Operation::Kind::kRecv ? "receive" : "send";
}

}  // namespace

TcpCore::TcpCore(int rank, int size, MeshSockets mesh, const TcpOptions& options)
    : rank_(rank),
      size_(size),
      options_(options),
      names_(peer_names(mesh.hosts)),
      discard_buffer_(256 * 1024) {
  epoll_fd_.reset(::epoll_create1(EPOLL_CLOEXEC));
  wake_fd_.reset(::eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC));
  if (!epoll_fd_.valid() || !wake_fd_.valid()) throw IoError("epoll/eventfd: " + errno_text(errno));
  epoll_event wake{};
  wake.events = EPOLLIN;
  wake.data.u64 = kWakeId;
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, wake_fd_.get(), &wake);
  links_.resize(size);
  for (int peer = 0; peer < size; ++peer) {
    if (peer == rank) continue;
    auto link = std::make_unique<PeerLink>();
    link->rank = peer;
    link->name = names_[peer];
    link->fd = std::move(mesh.peers[peer]);
    epoll_event ev{};
    ev.events = EPOLLIN | EPOLLRDHUP;
    ev.data.u64 = static_cast<uint64_t>(peer);
    if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_ADD, link->fd.get(), &ev) != 0)
      throw IoError("epoll_ctl: " + errno_text(errno));
    links_[peer] = std::move(link);
  }
  progress_ = std::thread([this] { progress_loop(); });
}

TcpCore::~TcpCore() {
  shutdown();
}

void TcpCore::finish_unheld(Operation& op, std::exception_ptr error) {
  progress_of(op).error = std::move(error);
  advance(op, OperationState::kFinished);
}

void TcpCore::complete(Operation& op, std::exception_ptr error) {
  Operation::Progress& progress = progress_of(op);
  if (!is_done(progress.state)) progress.error = std::move(error);
  advance(op, OperationState::kFinished);
  pending_.erase(&op);
  changed_.notify_all();
  // A caller sleeping in epoll_wait (wait.cc) hears only sockets and the
  // eventfd; completions made by any other thread must knock.
  if (driver_sleeping_ && std::this_thread::get_id() != driver_) wake_progress();
}

std::exception_ptr TcpCore::size_mismatch(const Operation& recv, uint64_t length) const {
  return std::make_exception_ptr(InternalError(fmt::format(
      "message size mismatch from {} on tag {}: receive posted for {} bytes, message has {} bytes",
      names_[recv.peer], recv.tag, recv.bytes, length)));
}

OperationPtr TcpCore::post_send(int peer, Tag tag, const void* data, size_t bytes) {
  if (peer < 0 || peer >= size_)
    throw InvalidArgument(fmt::format("send to rank {} outside world size {}", peer, size_));
  note_caller_activity();
  auto op = std::make_shared<Operation>(Operation::Kind::kSend, peer, tag, const_cast<void*>(data),
                                        bytes);
  if (peer == rank_) {
    send_to_self(op);
    return op;
  }
  PeerLink& link = *links_[peer];
  bool gone = false;
  {
    MutexLock lock(mutex_);
    if (poison_) {
      finish_unheld(*op, poison_);
      return op;
    }
    gone = is_gone(link.liveness.under(mutex_).state);
    if (!gone) {
      advance(*op, OperationState::kBusy);
      pending_.emplace(op.get(), op);
    }
  }
  if (gone) {
    peer_failed(link, "", true);
    MutexLock lock(mutex_);
    complete(*op, poison_);
    return op;
  }
  MutexLock send_lock(link.send_mutex);
  {
    MutexLock lock(mutex_);
    if (is_done(progress_of(*op).state)) {  // poisoned since we registered it
      complete(*op, nullptr);
      return op;
    }
  }
  int err = 0;
  switch (queue_frame(link, data_frame(tag, data, bytes, op), &err)) {
    case WriteStatus::kComplete: {
      MutexLock lock(mutex_);
      complete(*op, nullptr);
      break;
    }
    case WriteStatus::kFailed:
      send_lock.unlock();
      peer_failed(link, err ? errno_text(err) : "",
                  true);  // poisons; poison() lets go of the frame
      break;
    case WriteStatus::kWouldBlock:
      break;
  }
  return op;
}

WriteStatus TcpCore::queue_frame(PeerLink& link, OutFrame frame, int* err) {
  // Queued even on a failed link: poison() then lets go of its operation
  // like any other, so no path leaves an operation busy.
  link.outbox.push_back(std::move(frame));
  link.last_queued = Clock::now();
  if (link.send_failed) return WriteStatus::kFailed;
  if (link.outbox.size() == 1) {
    WriteStatus status = write_frame(link.fd.get(), link.outbox.front(), err);
    if (status == WriteStatus::kComplete) {
      link.outbox.pop_front();
      return status;
    }
    if (status == WriteStatus::kFailed) {
      link.send_failed = true;
      return status;
    }
  }
  enable_writable(link);
  return WriteStatus::kWouldBlock;
}

void TcpCore::send_to_self(const OperationPtr& op) {
  OperationPtr recv;
  {
    MutexLock lock(mutex_);
    if (poison_) {
      finish_unheld(*op, poison_);
      return;
    }
    finish_unheld(*op, nullptr);  // the bytes are copied before this returns
    recv = matcher_.take_posted(rank_, op->tag);
    if (recv && recv->bytes != op->bytes) {
      complete(*recv, size_mismatch(*recv, op->bytes));
      return;
    }
    if (recv) advance(*recv, OperationState::kBusy);
  }
  if (!recv) {
    UnexpectedMessage message{std::make_unique_for_overwrite<uint8_t[]>(op->bytes), op->bytes};
    if (op->bytes) std::memcpy(message.data.get(), op->data, op->bytes);
    MutexLock lock(mutex_);
    if (!poison_) matcher_.push_unexpected(rank_, op->tag, std::move(message));
    return;
  }
  if (op->bytes) std::memcpy(recv->data, op->data, op->bytes);
  MutexLock lock(mutex_);
  complete(*recv, nullptr);
}

bool TcpCore::try_adopt(PeerLink& link, const OperationPtr& recv) {
  InFlightFrame& in_flight = link.in_flight.under(mutex_);
  if (!in_flight.reading || in_flight.adopter || in_flight.tag != recv->tag ||
      in_flight.length != recv->bytes || matcher_.has_posted(link.rank, recv->tag))
    return false;
  advance(*recv, OperationState::kBusy);
  in_flight.adopter = recv;
  link.adoption_pending.store(true, std::memory_order_release);
  return true;
}

OperationPtr TcpCore::post_recv(int peer, Tag tag, void* data, size_t bytes) {
  if (peer < 0 || peer >= size_)
    throw InvalidArgument(fmt::format("receive from rank {} outside world size {}", peer, size_));
  note_caller_activity();
  auto op = std::make_shared<Operation>(Operation::Kind::kRecv, peer, tag, data, bytes);
  PeerLink* link = peer == rank_ ? nullptr : links_[peer].get();
  std::optional<UnexpectedMessage> early;
  bool peer_gone = false;
  {
    MutexLock lock(mutex_);
    if (poison_) {
      finish_unheld(*op, poison_);
      return op;
    }
    // Messages that arrived before the peer left are still delivered.
    early = matcher_.take_unexpected(peer, tag);
    if (early && early->size != bytes) {
      finish_unheld(*op, size_mismatch(*op, early->size));
      return op;
    }
    peer_gone = !early && link && is_gone(link->liveness.under(mutex_).state);
    if (!peer_gone) {
      pending_.emplace(op.get(), op);
      if (early) {
        advance(*op, OperationState::kBusy);
      } else if (!link || !try_adopt(*link, op)) {  // try_adopt makes it busy
        advance(*op, OperationState::kPosted);
        matcher_.post(op);
      }
    }
  }
  if (peer_gone) {
    peer_failed(*link, "", true);  // poisons the core
    MutexLock lock(mutex_);
    finish_unheld(*op, poison_);
    return op;
  }
  if (early) {
    if (bytes) std::memcpy(data, early->data.get(), bytes);
    MutexLock lock(mutex_);
    complete(*op, nullptr);
  }
  return op;
}

void TcpCore::abort(const std::string& reason) {
  poison(std::make_exception_ptr(AbortedError(reason)), rank_, reason, true);
}

std::string TcpCore::pending_description(int peer) const {
  // A finished send the caller has not waited for yet owes nothing.
  for (const auto& [ptr, op] : pending_)
    if (op->peer == peer && !is_done(progress_of(*op).state))
      return fmt::format(" (pending {} tag {}, {} bytes)", verb(*op), op->tag, op->bytes);
  return "";
}

void TcpCore::peer_failed(PeerLink& link, const std::string& reason, bool mid_frame) {
  lose_peer(link, "lost: " + (reason.empty() ? std::string("connection failed") : reason),
            mid_frame);
}

void TcpCore::peer_silent(PeerLink& link, std::chrono::milliseconds silence) {
  lose_peer(link,
            fmt::format("stopped answering: nothing received for {:.1f} s",
                        static_cast<double>(silence.count()) / 1000.0),
            true);
}

void TcpCore::lose_peer(PeerLink& link, const std::string& what, bool mid_frame) {
  std::string message;
  {
    // Under the send lock no send to this peer sits between its last write
    // and its completion, so "pending" below means bytes that never left.
    MutexLock send_lock(link.send_mutex);
    MutexLock lock(mutex_);
    PeerLiveness& liveness = link.liveness.under(mutex_);
    if (!is_gone(liveness.state)) {
      liveness.state =
          transition(liveness.state, said_goodbye(liveness.state) ? PeerState::kGoneAfterGoodbye
                                                                  : PeerState::kGone);
      liveness.gone_reason = what;
    }
    bool waited_on = mid_frame || !pending_description(link.rank).empty();
    // A peer that said goodbye and owes us nothing left cleanly.
    if (poison_ || (said_goodbye(liveness.state) && !waited_on)) {
      if (!poison_) KOLO_LOG_DEBUG("rank {}: {} closed its context", rank_, link.name);
      stop_polling(link);
      return;
    }
    message =
        fmt::format("{} {}{}", link.name, liveness.gone_reason, pending_description(link.rank));
  }
  stop_polling(link);
  poison(std::make_exception_ptr(PeerLostError(message)), rank_, message, true);
}

void TcpCore::poison(std::exception_ptr error, int origin, const std::string& reason,
                     bool tell_peers) {
  {
    MutexLock lock(mutex_);
    if (poison_) return;
    poison_ = error;
    poisoned_.store(true);
    // Every posted receive is pending too, and fails in the loop below.
    matcher_.take_all_posted();
    matcher_.drop_all_unexpected();
    for (auto it = pending_.begin(); it != pending_.end();) {
      Operation& op = *it->second;
      Operation::Progress& progress = progress_of(op);
      if (progress.state == OperationState::kBusy) {
        // The transport still holds the buffer; it finishes the operation
        // when it lets go.
        progress.error = error;
        advance(op, OperationState::kFailedBusy);
      } else if (!is_done(progress.state)) {
        progress.error = error;
        advance(op, OperationState::kFinished);
      }
      it = progress.state == OperationState::kFailedBusy ? std::next(it) : pending_.erase(it);
    }
    changed_.notify_all();
    if (!closed_) KOLO_LOG_WARNING("rank {}: transport failed: {}", rank_, message_of(error));
  }
  const std::string abort_body = fmt::format("{}\n{}", origin, reason);
  for (auto& link : links_) {
    if (!link) continue;
    MutexLock send_lock(link->send_mutex);
    std::deque<OutFrame> kept;
    for (auto& frame : link->outbox) {
      if (frame.op) {
        MutexLock lock(mutex_);
        complete(*frame.op, nullptr);  // already failed above; this lets go of it
        frame.op.reset();
        if (frame.started()) frame.make_void();
      }
      // A half-written frame must be finished to keep the stream in sync.
      if (frame.started() || frame.header.kind != FrameKind::kData)
        kept.push_back(std::move(frame));
    }
    link->outbox = std::move(kept);
    int err = 0;
    if (tell_peers) queue_frame(*link, control_frame(FrameKind::kAbort, abort_body), &err);
  }
  wake_progress();
}

void TcpCore::enable_writable(PeerLink& link) {
  if (link.want_writable || link.send_failed) return;
  epoll_event ev{};
  ev.events = EPOLLIN | EPOLLRDHUP | EPOLLOUT;
  ev.data.u64 = static_cast<uint64_t>(link.rank);
  // Fails only for a link no longer polled (gone), whose outbox never drains.
  if (::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, link.fd.get(), &ev) == 0)
    link.want_writable = true;
}

void TcpCore::stop_polling(PeerLink& link) {
  ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_DEL, link.fd.get(), nullptr);
}

void TcpCore::wake_progress() {
  uint64_t one = 1;
  [[maybe_unused]] ssize_t n = ::write(wake_fd_.get(), &one, sizeof(one));
}

void TcpCore::shutdown() noexcept {
  {
    MutexLock lock(mutex_);
    if (closed_) return;
    closed_ = true;
  }
  poison(std::make_exception_ptr(AbortedError("transport context was destroyed")), rank_, "",
         false);
  for (auto& link : links_) {
    if (!link) continue;
    MutexLock send_lock(link->send_mutex);
    int err = 0;
    queue_frame(*link, control_frame(FrameKind::kGoodbye, ""), &err);
  }
  // Let the progress thread deliver the goodbyes (and any voided tails), but
  // never wait long on a peer that stopped reading.
  auto deadline = Clock::now() + kGoodbyeGrace;
  for (bool flushed = false; !flushed && Clock::now() < deadline;) {
    flushed = true;
    for (auto& link : links_) {
      if (!link) continue;
      MutexLock send_lock(link->send_mutex);
      if (link->outbox.empty() || link->send_failed || !link->want_writable) continue;
      MutexLock lock(mutex_);
      // A gone link is no longer polled.
      if (!is_gone(link->liveness.under(mutex_).state)) flushed = false;
    }
    if (!flushed) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  for (auto& link : links_) {
    if (!link) continue;
    MutexLock send_lock(link->send_mutex);
    MutexLock lock(mutex_);
    if (!link->outbox.empty() && !link->send_failed && link->want_writable &&
        !is_gone(link->liveness.under(mutex_).state))
      KOLO_LOG_WARNING(
          "rank {}: closing without delivering {} frame(s) to {} (written {} of first)", rank_,
          link->outbox.size(), link->name, link->outbox.front().written);
  }
  stopping_.store(true);
  wake_progress();
  if (progress_.joinable()) progress_.join();
  for (auto& link : links_)
    if (link) link->fd.reset();
}

void TcpCore::check_health() const {
  if (!poisoned_.load()) return;
  MutexLock lock(mutex_);
  if (poison_) std::rethrow_exception(poison_);
}

}  // namespace kolo::transport::tcp
