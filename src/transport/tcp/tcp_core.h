// TcpCore: the engine behind a TCP Context. Owns the peer sockets and one
// progress thread; Requests share ownership, so one that outlives its
// Context still finishes safely (with an error).
//
// Threads:
// - Callers post sends and receives from any thread. A send is written
//   right away from the caller's thread when its peer's outbox is empty
//   (small messages then complete without a thread hop); whatever the socket
//   does not take is queued, and the progress thread finishes it on EPOLLOUT.
//   Sends therefore progress while the caller waits on something else, and
//   two ranks sending big messages to each other cannot deadlock.
// - The event loop (progress.cc) polls every peer socket with epoll and
//   always drains incoming data: a frame body goes straight into the posted
//   receive's buffer, or into an unexpected-message buffer if none is posted.
//   Whoever holds poll_mutex_ runs it: a caller blocked in wait() (wait.cc)
//   runs it itself, so the bytes it waits for wake it straight from
//   epoll_wait with no thread hop; the progress thread stays parked while
//   callers keep waiting and takes over once none has waited for a moment,
//   so sends and receives still progress while the caller computes.
//
// Failure (the Context contract): the first error - a peer lost, an ABORT
// from a peer, abort(), or a wait that timed out - poisons the core. Every
// pending and later operation fails with that root cause, and an ABORT frame
// carrying it goes to every reachable peer.
#pragma once

#include <atomic>
#include <exception>
#include <memory>
#include <string>
#include <thread>
#include <unordered_map>
#include <vector>

#include "common/thread_annotations.h"
#include "transport/tcp/bootstrap.h"
#include "transport/tcp/matcher.h"
#include "transport/tcp/peer_link.h"
#include "transport/tcp/tcp_options.h"

namespace kolo::transport::tcp {

class TcpCore {
 public:
  TcpCore(int rank, int size, MeshSockets mesh, const TcpOptions& options);
  ~TcpCore();
  TcpCore(const TcpCore&) = delete;
  TcpCore& operator=(const TcpCore&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& peer_name(int rank) const { return names_.at(rank); }

  OperationPtr post_send(int peer, Tag tag, const void* data, size_t bytes) KOLO_EXCLUDES(mutex_);
  OperationPtr post_recv(int peer, Tag tag, void* data, size_t bytes) KOLO_EXCLUDES(mutex_);
  // Blocks until `op` finishes; throws its error. A wait past op_timeout
  // poisons the core with a TimeoutError naming the peer, tag and size.
  void wait(Operation& op) KOLO_EXCLUDES(mutex_, poll_mutex_);
  bool test(Operation& op) KOLO_EXCLUDES(mutex_);
  // For a Request dropped unfinished: cancels a posted receive, else waits.
  void release(Operation& op) noexcept KOLO_EXCLUDES(mutex_, poll_mutex_);

  // Throws the poison, if any (Context::check_health).
  void check_health() const KOLO_EXCLUDES(mutex_);
  // Poisons with AbortedError(reason) and tells the peers.
  void abort(const std::string& reason) KOLO_EXCLUDES(mutex_);
  // Clean close (Context destructor): fails local operations, says goodbye
  // to the peers, stops the progress thread, closes the sockets.
  void shutdown() noexcept KOLO_EXCLUDES(mutex_, poll_mutex_);

 private:
  // --- tcp_core.cc: operations and failure ---
  // The operation's state and error (see Operation::progress).
  Operation::Progress& progress_of(Operation& op) KOLO_REQUIRES(mutex_) {
    return op.progress.under(mutex_);
  }
  const Operation::Progress& progress_of(const Operation& op) const KOLO_REQUIRES(mutex_) {
    return op.progress.under(mutex_);
  }
  // Moves op to `to` through the checked transition (operation_state.h).
  void advance(Operation& op, OperationState to) KOLO_REQUIRES(mutex_) {
    auto& state = progress_of(op).state;
    state = transition(state, to);
  }
  // Finishes an operation the transport never held (not pending) with `error`.
  void finish_unheld(Operation& op, std::exception_ptr error) KOLO_REQUIRES(mutex_);
  // Marks op finished (keeping an earlier error) and wakes waiters.
  void complete(Operation& op, std::exception_ptr error) KOLO_REQUIRES(mutex_);
  bool try_adopt(PeerLink& link, const OperationPtr& recv) KOLO_REQUIRES(mutex_);
  std::exception_ptr size_mismatch(const Operation& recv, uint64_t length) const;
  void send_to_self(const OperationPtr& op) KOLO_EXCLUDES(mutex_);
  // Fails everything with `error`; tell_peers sends ABORT "<origin>\n<reason>".
  void poison(std::exception_ptr error, int origin, const std::string& reason, bool tell_peers)
      KOLO_EXCLUDES(mutex_);
  // The peer is gone (EOF, reset, protocol error): "rank R (host h) lost: <reason>".
  void peer_failed(PeerLink& link, const std::string& reason, bool mid_frame)
      KOLO_EXCLUDES(mutex_, link.send_mutex);
  // Nothing arrived from the peer for longer than peer_timeout.
  void peer_silent(PeerLink& link, std::chrono::milliseconds silence)
      KOLO_EXCLUDES(mutex_, link.send_mutex);
  // Marks the link gone and poisons with PeerLostError("<name> <what>"),
  // unless the peer had said goodbye and nothing waits on it.
  void lose_peer(PeerLink& link, const std::string& what, bool mid_frame)
      KOLO_EXCLUDES(mutex_, link.send_mutex);
  std::string pending_description(int peer) const KOLO_REQUIRES(mutex_);
  // Queues `frame`; when nothing is ahead of it, writes what the socket
  // takes at once (small messages, ABORT and GOODBYE then need no thread
  // hop). kComplete: sent and dequeued. kWouldBlock: the progress thread
  // finishes it. kFailed: send_failed is set, *err says why.
  WriteStatus queue_frame(PeerLink& link, OutFrame frame, int* err) KOLO_REQUIRES(link.send_mutex);
  void enable_writable(PeerLink& link) KOLO_REQUIRES(link.send_mutex);
  void wake_progress();

  // --- progress.cc: the event loop and the progress thread ---
  void progress_loop();
  void poll_until_stopped();
  // One epoll_wait (up to timeout_ms) and the events it returns, then
  // keep-alive when due. Needs poll_mutex_; throws on an epoll failure.
  // A waiting caller passes the receive it waits for: once that receive is
  // filled, the loop reads no further frames, so the next message stays in
  // the socket until its own receive is likely posted, and lands there
  // directly instead of taking the unexpected-message copy.
  void poll_once(int timeout_ms, const Operation* awaited = nullptr) KOLO_REQUIRES(poll_mutex_);
  std::chrono::milliseconds keep_alive_period() const;
  // A caller waits now, or waited or posted an operation within kHandBack:
  // the progress thread parks.
  bool callers_driving() const;
  // Short enough that a caller who stops waiting to compute leaves its
  // queued sends stalled only briefly; long enough to span the gaps between
  // the waits of one collective. Posting counts as activity: a collective
  // that posts a burst of large sends would otherwise see the progress
  // thread take over and contend with it for the sockets.
  static constexpr std::chrono::milliseconds kHandBack{1};
  void note_caller_activity() {
    last_caller_activity_.store(Clock::now().time_since_epoch().count());
  }
  // The link's receiving side (see PeerLink::receiver).
  PeerReceiver& receiver_of(PeerLink& link) KOLO_REQUIRES(poll_mutex_) {
    return link.receiver.under(poll_mutex_);
  }
  void on_readable(PeerLink& link) KOLO_REQUIRES(poll_mutex_);
  void on_writable(PeerLink& link) KOLO_EXCLUDES(mutex_, link.send_mutex);
  // Reads one step of the frame; false when the socket would block or failed.
  bool read_step(PeerLink& link) KOLO_REQUIRES(poll_mutex_);
  // Parses staged bytes into the frame being read; false once the link failed.
  bool parse_staged(PeerLink& link) KOLO_REQUIRES(poll_mutex_);
  void set_rcvlowat(PeerLink& link, int bytes) KOLO_REQUIRES(poll_mutex_);
  bool on_header(PeerLink& link) KOLO_REQUIRES(poll_mutex_) KOLO_EXCLUDES(mutex_);
  void on_frame_end(PeerLink& link) KOLO_REQUIRES(poll_mutex_) KOLO_EXCLUDES(mutex_);
  void deliver_unexpected(PeerLink& link, FrameReader& reader, bool committed)
      KOLO_REQUIRES(poll_mutex_) KOLO_EXCLUDES(mutex_);
  void take_adoption(PeerLink& link) KOLO_REQUIRES(poll_mutex_) KOLO_EXCLUDES(mutex_);
  void on_control(PeerLink& link, FrameReader& reader) KOLO_EXCLUDES(mutex_);
  void release_buffers_after_poison() KOLO_REQUIRES(poll_mutex_) KOLO_EXCLUDES(mutex_);
  void stop_polling(PeerLink& link);
  // Liveness (see TcpOptions::peer_timeout): sends a heartbeat on every idle
  // connection and declares lost any peer silent for too long.
  void keep_alive(Clock::time_point now) KOLO_REQUIRES(poll_mutex_) KOLO_EXCLUDES(mutex_);

  const int rank_;
  const int size_;
  const TcpOptions options_;
  const std::vector<std::string> names_;          // peer_name() of every rank
  std::vector<std::unique_ptr<PeerLink>> links_;  // [rank]; null at our rank

  UniqueFd epoll_fd_;
  UniqueFd wake_fd_;  // eventfd: poison and shutdown wake the progress thread
  std::thread progress_;
  std::atomic<bool> stopping_{false};
  // Held by whoever runs the event loop (progress thread or a waiting
  // caller). It guards every link's PeerReceiver and the fields below.
  Mutex poll_mutex_;
  std::vector<uint8_t> discard_buffer_ KOLO_GUARDED_BY(poll_mutex_);
  const Operation* awaited_ KOLO_GUARDED_BY(poll_mutex_) = nullptr;  // see poll_once
  bool awaited_filled_ KOLO_GUARDED_BY(poll_mutex_) = false;
  Clock::time_point next_keep_alive_ KOLO_GUARDED_BY(poll_mutex_){};
  // Callers inside wait(); the progress thread parks while there are any,
  // and for kHandBack after the last left or posted (see wait.cc).
  std::atomic<int> waiters_{0};
  std::atomic<Clock::rep> last_caller_activity_{0};

  // Guards the fields below, every Operation's progress, and every link's
  // liveness and in_flight. Taken after poll_mutex_ and after a link's
  // send_mutex, never before them.
  mutable Mutex mutex_;
  CondVar changed_;  // an operation finished; waits on mutex_
  Matcher matcher_ KOLO_GUARDED_BY(mutex_);
  // Operations not yet finished, so poison() can fail them wherever they are
  // (posted, queued, being filled, or voided mid-frame and held by nobody).
  std::unordered_map<const Operation*, OperationPtr> pending_ KOLO_GUARDED_BY(mutex_);
  std::exception_ptr poison_ KOLO_GUARDED_BY(mutex_);
  std::atomic<bool> poisoned_{false};  // mirrors poison_ != nullptr
  bool closed_ KOLO_GUARDED_BY(mutex_) = false;
  // A caller blocked in epoll_wait as driver, and its thread.
  bool driver_sleeping_ KOLO_GUARDED_BY(mutex_) = false;
  std::thread::id driver_ KOLO_GUARDED_BY(mutex_);
};

}  // namespace kolo::transport::tcp
