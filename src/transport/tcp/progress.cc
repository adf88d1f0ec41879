// TcpCore's progress thread: reads frames from every peer socket, matches
// them to posted receives, and finishes queued sends.
#include <fmt/format.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <thread>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/logging.h"
#include "transport/tcp/tcp_core.h"

namespace kolo::transport::tcp {

namespace {
constexpr uint64_t kWakeId = ~uint64_t{0};
// Reads per readable event before moving to the next socket, so one busy
// peer cannot starve the others (epoll is level-triggered; we come back).
constexpr int kReadsPerEvent = 64;
// While callers wait (and drive the loop), the progress thread naps this
// long between checks; it takes over kHandBack after the last wait or post.
constexpr auto kParkSlice = std::chrono::microseconds(500);
// Bodies with at least kLowatMin bytes left wake their reader only once up
// to kLowatMax bytes are there (SO_RCVLOWAT).
constexpr size_t kLowatMin = 64 * 1024;
constexpr size_t kLowatMax = 1024 * 1024;
}  // namespace

void TcpCore::progress_loop() {
  // Nothing may escape this thread (std::terminate would take the whole
  // job down without a word); a failure here poisons the context instead.
  try {
    poll_until_stopped();
  } catch (const std::exception& e) {
    std::string message = std::string("transport progress thread failed: ") + e.what();
    poison(std::make_exception_ptr(InternalError(message)), rank_, message, true);
    MutexLock poll(poll_mutex_);
    release_buffers_after_poison();
  }
}

std::chrono::milliseconds TcpCore::keep_alive_period() const {
  // A few checks per heartbeat interval, so a heartbeat is never much later
  // than due and a silent peer is caught soon after peer_timeout, while a
  // busy loop reads the clock only once per wake-up.
  return std::max<std::chrono::milliseconds>(options_.heartbeat_interval() / 4,
                                             std::chrono::milliseconds(1));
}

bool TcpCore::callers_driving() const {
  if (waiters_.load() > 0) return true;
  const auto last = Clock::time_point(Clock::duration(last_caller_activity_.load()));
  return Clock::now() - last < kHandBack;
}

void TcpCore::poll_until_stopped() {
  const int timeout_ms = static_cast<int>(keep_alive_period().count());
  while (!stopping_.load()) {
    // Out of the way of a waiting caller that polls for itself: a second
    // thread in epoll_wait would be woken by the same bytes for nothing,
    // which costs a context switch per message on a busy host.
    if (callers_driving()) {
      std::this_thread::sleep_for(kParkSlice);
      continue;
    }
    if (!poll_mutex_.try_lock()) {
      std::this_thread::sleep_for(kParkSlice);
      continue;
    }
    {
      MutexLock poll(poll_mutex_, std::adopt_lock);
      poll_once(timeout_ms);
    }
    // A caller that arrived while we held the loop woke us (wait.cc) and
    // waits for it; hand it over now rather than at its next retry.
    if (waiters_.load() > 0) {
      MutexLock lock(mutex_);
      changed_.notify_all();
    }
  }
}

void TcpCore::poll_once(int timeout_ms, const Operation* awaited) {
  awaited_ = awaited;
  awaited_filled_ = false;
  // Staged bytes are already out of the socket, so no event announces them.
  bool staged = false;
  for (auto& link : links_)
    if (link && receiver_of(*link).staged()) {
      on_readable(*link);
      staged = true;
    }
  epoll_event events[64];
  int n = ::epoll_wait(epoll_fd_.get(), events, 64, staged || awaited_filled_ ? 0 : timeout_ms);
  if (n < 0) {
    if (errno == EINTR) return;
    throw IoError("epoll_wait: " + errno_text(errno));
  }
  // Level-triggered, non-blocking sockets: an event another poller already
  // handled just reads EAGAIN, so stale events are harmless.
  for (int i = 0; i < n; ++i) {
    const uint64_t id = events[i].data.u64;
    if (id == kWakeId) {
      uint64_t count;
      [[maybe_unused]] ssize_t r = ::read(wake_fd_.get(), &count, sizeof(count));
      continue;
    }
    PeerLink& link = *links_[id];
    if (events[i].events & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR)) on_readable(link);
    if (events[i].events & EPOLLOUT) on_writable(link);
  }
  if (poisoned_.load()) release_buffers_after_poison();
  const auto now = Clock::now();
  if (now >= next_keep_alive_) {
    keep_alive(now);
    next_keep_alive_ = now + keep_alive_period();
  }
}

void TcpCore::keep_alive(Clock::time_point now) {
  // Once poisoned, every peer has been (or is being) told; nothing to keep.
  if (poisoned_.load()) return;
  const auto interval = options_.heartbeat_interval();
  for (auto& link : links_) {
    if (!link) continue;
    {
      MutexLock lock(mutex_);
      const PeerState state = link->liveness.under(mutex_).state;
      if (is_gone(state) || said_goodbye(state)) continue;
    }
    const auto silence = std::chrono::duration_cast<std::chrono::milliseconds>(
        now - receiver_of(*link).last_received);
    if (silence > options_.peer_timeout) {
      peer_silent(*link, silence);  // poisons, which tells the other peers
      return;
    }
    int err = 0;
    bool failed = false;
    {
      MutexLock send_lock(link->send_mutex);
      // Only on an empty outbox: the heartbeat then goes out whole, never
      // between the bytes of another frame, and a busy link needs none.
      if (!link->send_failed && link->outbox.empty() && now - link->last_queued >= interval)
        failed = queue_frame(*link, control_frame(FrameKind::kHeartbeat, ""), &err) ==
                 WriteStatus::kFailed;
    }
    if (failed) peer_failed(*link, connection_error_text(err), false);
  }
}

void TcpCore::on_readable(PeerLink& link) {
  for (int i = 0; i < kReadsPerEvent && !awaited_filled_; ++i)
    if (!read_step(link)) return;
}

bool TcpCore::read_step(PeerLink& link) {
  PeerReceiver& in = receiver_of(link);
  if (in.staged()) return parse_staged(link);
  FrameReader& r = in.reader;
  if (r.in_body && r.sink == Sink::kUnexpected &&
      link.adoption_pending.load(std::memory_order_acquire))
    take_adoption(link);
  const size_t body_left = r.in_body ? r.header.length - r.body_got : 0;
  ssize_t n;
  if (body_left < PeerReceiver::kStageBytes) {
    // A header, a small body or the tail of one: through the stage, which
    // also takes whatever follows in the same call.
    n = ::recv(link.fd.get(), in.stage.get(), PeerReceiver::kStageBytes, 0);
  } else {
    // A large body goes straight to its destination, trailer included once
    // the body is covered.
    iovec iov[2];
    int count = 0;
    bool covers_body = true;
    if (r.sink == Sink::kDiscard) {
      size_t chunk = std::min(body_left, discard_buffer_.size());
      iov[count++] = {discard_buffer_.data(), chunk};
      covers_body = chunk == body_left;
    } else {
      iov[count++] = {r.body + r.body_got, body_left};
    }
    if (covers_body)
      iov[count++] = {reinterpret_cast<uint8_t*>(&r.trailer) + r.trailer_got,
                      sizeof(r.trailer) - r.trailer_got};
    n = ::readv(link.fd.get(), iov, count);
  }
  if (n <= 0) {
    if (n < 0 && errno == EINTR) return true;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return false;
    peer_failed(link, connection_error_text(n == 0 ? 0 : errno), r.mid_frame());
    return false;
  }
  in.last_received = Clock::now();
  const size_t got = static_cast<size_t>(n);
  if (body_left < PeerReceiver::kStageBytes) {
    in.stage_begin = 0;
    in.stage_end = got;
    return parse_staged(link);
  }
  const size_t to_body = std::min(got, body_left);
  r.body_got += to_body;
  r.trailer_got += got - to_body;
  if (r.body_got == r.header.length && r.trailer_got == sizeof(r.trailer)) {
    on_frame_end(link);
  } else {
    // The rest of a large body is still on its way. On loopback, reading it
    // as it trickles in costs a wake-up per packet and makes the sender's
    // softirq contend with us for the socket lock; ask the kernel to wake
    // us once it has all arrived (it wakes us earlier anyway should the
    // receive window fill up).
    // Never above what is left to come, or the last bytes would wake nobody.
    const size_t left = r.header.length - r.body_got + sizeof(r.trailer) - r.trailer_got;
    set_rcvlowat(link, left >= kLowatMin ? static_cast<int>(std::min(left, kLowatMax)) : 1);
    return false;  // come back when the kernel says it is all there
  }
  return true;
}

void TcpCore::set_rcvlowat(PeerLink& link, int bytes) {
  PeerReceiver& in = receiver_of(link);
  if (in.rcvlowat == bytes) return;
  if (::setsockopt(link.fd.get(), SOL_SOCKET, SO_RCVLOWAT, &bytes, sizeof(bytes)) == 0)
    in.rcvlowat = bytes;
}

bool TcpCore::parse_staged(PeerLink& link) {
  PeerReceiver& in = receiver_of(link);
  FrameReader& r = in.reader;
  // Stops at the frame boundary after the awaited receive, like on_readable.
  while (in.staged() && !awaited_filled_) {
    const uint8_t* from = in.stage.get() + in.stage_begin;
    const size_t available = in.stage_end - in.stage_begin;
    size_t take;
    if (!r.in_body) {
      take = std::min(available, sizeof(r.header) - r.header_got);
      std::memcpy(reinterpret_cast<uint8_t*>(&r.header) + r.header_got, from, take);
      in.stage_begin += take;
      r.header_got += take;
      // A zero-length body still has its trailer, parsed next round.
      if (r.header_got == sizeof(r.header) && !on_header(link)) {
        in.stage_begin = in.stage_end;  // the link failed; nothing after it counts
        return false;
      }
      continue;
    }
    if (r.sink == Sink::kUnexpected && link.adoption_pending.load(std::memory_order_acquire))
      take_adoption(link);
    const size_t body_left = r.header.length - r.body_got;
    if (body_left > 0) {
      take = std::min(available, body_left);
      if (r.sink != Sink::kDiscard) std::memcpy(r.body + r.body_got, from, take);
      r.body_got += take;
    } else {
      take = std::min(available, sizeof(r.trailer) - r.trailer_got);
      std::memcpy(reinterpret_cast<uint8_t*>(&r.trailer) + r.trailer_got, from, take);
      r.trailer_got += take;
    }
    in.stage_begin += take;
    if (r.body_got == r.header.length && r.trailer_got == sizeof(r.trailer)) on_frame_end(link);
  }
  return true;
}

bool TcpCore::on_header(PeerLink& link) {
  FrameReader& r = receiver_of(link).reader;
  const FrameHeader& h = r.header;
  const bool control = h.kind == FrameKind::kAbort || h.kind == FrameKind::kGoodbye ||
                       h.kind == FrameKind::kHeartbeat;
  if (h.magic != FrameHeader::kMagic || (!control && h.kind != FrameKind::kData) ||
      (control && h.length > kMaxControlBody)) {
    peer_failed(link,
                fmt::format("protocol error: bad frame header (kind {}, length {})",
                            static_cast<uint32_t>(h.kind), h.length),
                true);
    return false;
  }
  r.in_body = true;
  if (control) {
    r.sink = Sink::kControl;
  } else {
    MutexLock lock(mutex_);
    OperationPtr op = poison_ ? nullptr : matcher_.take_posted(link.rank, h.tag);
    if (poison_) {
      r.sink = Sink::kDiscard;
    } else if (!op) {
      r.sink = Sink::kUnexpected;
      InFlightFrame& in_flight = link.in_flight.under(mutex_);
      in_flight.reading = true;
      in_flight.tag = h.tag;
      in_flight.length = h.length;
    } else if (op->bytes != h.length) {
      complete(*op, size_mismatch(*op, h.length));
      r.sink = Sink::kDiscard;
    } else {
      advance(*op, OperationState::kBusy);
      r.op = std::move(op);
      r.sink = Sink::kPosted;
      r.body = static_cast<uint8_t*>(r.op->data);
    }
  }
  if (r.sink == Sink::kUnexpected || r.sink == Sink::kControl) {
    try {
      // Not zero-filled: every byte is about to be overwritten by the socket.
      r.owned.data = std::make_unique_for_overwrite<uint8_t[]>(h.length);
    } catch (const std::bad_alloc&) {
      peer_failed(
          link,
          fmt::format("cannot buffer an unexpected {}-byte message (tag {})", h.length, h.tag),
          true);
      return false;
    }
    r.owned.size = h.length;
    r.body = r.owned.data.get();
  }
  return true;
}

// An irecv matched the unexpected frame being read: copy what has arrived
// into its buffer and read the rest there directly.
void TcpCore::take_adoption(PeerLink& link) {
  OperationPtr op;
  {
    MutexLock lock(mutex_);
    InFlightFrame& in_flight = link.in_flight.under(mutex_);
    op = std::move(in_flight.adopter);
    in_flight.adopter.reset();
    link.adoption_pending.store(false);
    in_flight.reading = false;
  }
  if (!op) return;
  FrameReader& r = receiver_of(link).reader;
  if (r.body_got) std::memcpy(op->data, r.owned.data.get(), r.body_got);
  r.owned = UnexpectedMessage();
  r.op = std::move(op);
  r.sink = Sink::kPosted;
  r.body = static_cast<uint8_t*>(r.op->data);
}

void TcpCore::on_frame_end(PeerLink& link) {
  set_rcvlowat(link, 1);
  FrameReader& reader = receiver_of(link).reader;
  FrameReader r = std::move(reader);
  reader.reset();
  // A voided frame (see wire.h) is dropped; the ABORT behind it, or the
  // peer's EOF, fails whatever was waiting for it.
  const bool committed = r.trailer == kTrailerCommit;
  switch (r.sink) {
    case Sink::kPosted: {
      MutexLock lock(mutex_);
      if (committed) {
        awaited_filled_ = awaited_filled_ || r.op.get() == awaited_;
        complete(*r.op, nullptr);
      } else {
        // Voided: one the poison already failed is finished now; any other
        // waits for the poison that follows.
        const bool failed = is_done(progress_of(*r.op).state);
        advance(*r.op, failed ? OperationState::kFinished : OperationState::kVoided);
        changed_.notify_all();
      }
      break;
    }
    case Sink::kUnexpected:
      deliver_unexpected(link, r, committed);
      break;
    case Sink::kControl:
      if (committed) on_control(link, r);
      break;
    case Sink::kDiscard:
      break;
  }
}

void TcpCore::deliver_unexpected(PeerLink& link, FrameReader& r, bool committed) {
  OperationPtr target;
  {
    MutexLock lock(mutex_);
    InFlightFrame& in_flight = link.in_flight.under(mutex_);
    in_flight.reading = false;
    target = std::move(in_flight.adopter);
    in_flight.adopter.reset();
    link.adoption_pending.store(false);
    if (!committed || poison_) {
      // Voided: the adopter stays pending until the poison that follows.
      if (target && poison_) complete(*target, poison_);
      if (target && !poison_) advance(*target, OperationState::kVoided);
      changed_.notify_all();
      return;
    }
    if (!target) {
      target = matcher_.take_posted(link.rank, r.header.tag);
      if (!target) {
        matcher_.push_unexpected(link.rank, r.header.tag, std::move(r.owned));
        return;
      }
      if (target->bytes != r.owned.size) {
        complete(*target, size_mismatch(*target, r.owned.size));
        return;
      }
      advance(*target, OperationState::kBusy);
    }
  }
  if (r.owned.size) std::memcpy(target->data, r.owned.data.get(), r.owned.size);
  awaited_filled_ = awaited_filled_ || target.get() == awaited_;
  MutexLock lock(mutex_);
  complete(*target, nullptr);
}

void TcpCore::on_control(PeerLink& link, FrameReader& r) {
  if (r.header.kind == FrameKind::kHeartbeat) return;  // its arrival was the message
  std::string body(reinterpret_cast<const char*>(r.owned.data.get()), r.owned.size);
  if (r.header.kind == FrameKind::kGoodbye) {
    MutexLock lock(mutex_);
    PeerLiveness& liveness = link.liveness.under(mutex_);
    if (!said_goodbye(liveness.state))
      liveness.state =
          transition(liveness.state, is_gone(liveness.state) ? PeerState::kGoneAfterGoodbye
                                                             : PeerState::kSaidGoodbye);
    return;
  }
  // "<origin rank>\n<reason>": forwarded aborts keep the rank that started
  // them, so every rank reports the root cause, not the nearest messenger.
  int origin = link.rank;
  std::string reason = body;
  auto newline = body.find('\n');
  if (newline != std::string::npos) {
    try {
      origin = std::stoi(body.substr(0, newline));
    } catch (const std::exception&) {
    }
    reason = body.substr(newline + 1);
  }
  std::string message = fmt::format("rank {} aborted: {}", origin, reason);
  poison(std::make_exception_ptr(AbortedError(message)), origin, reason, true);
}

void TcpCore::on_writable(PeerLink& link) {
  int err = 0;
  bool failed = false;
  {
    MutexLock send_lock(link.send_mutex);
    while (!link.outbox.empty()) {
      OutFrame& frame = link.outbox.front();
      WriteStatus status = write_frame(link.fd.get(), frame, &err);
      if (status == WriteStatus::kWouldBlock) break;
      if (status == WriteStatus::kFailed) {
        link.send_failed = true;
        failed = true;
        break;
      }
      if (frame.op) {
        // Completed under send_mutex, so poison() never sees a popped but
        // still-busy operation.
        MutexLock lock(mutex_);
        complete(*frame.op, nullptr);
      }
      link.outbox.pop_front();
    }
    if ((link.outbox.empty() || failed) && link.want_writable) {
      epoll_event ev{};
      ev.events = EPOLLIN | EPOLLRDHUP;
      ev.data.u64 = static_cast<uint64_t>(link.rank);
      ::epoll_ctl(epoll_fd_.get(), EPOLL_CTL_MOD, link.fd.get(), &ev);
      link.want_writable = false;
    }
  }
  if (failed) peer_failed(link, connection_error_text(err), true);
}

// After a poison, waiters may return only once we stop writing into their
// buffers; the rest of any frame being read is dropped.
void TcpCore::release_buffers_after_poison() {
  for (auto& link : links_) {
    if (!link) continue;
    FrameReader& r = receiver_of(*link).reader;
    MutexLock lock(mutex_);
    if (r.sink == Sink::kPosted && r.op) {
      complete(*r.op, poison_);
      r.op.reset();
      r.sink = Sink::kDiscard;
      r.body = nullptr;
    }
    InFlightFrame& in_flight = link->in_flight.under(mutex_);
    if (in_flight.adopter) {
      complete(*in_flight.adopter, poison_);
      in_flight.adopter.reset();
      link->adoption_pending.store(false);
    }
    changed_.notify_all();
  }
}

}  // namespace kolo::transport::tcp
