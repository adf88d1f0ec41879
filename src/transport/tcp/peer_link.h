// Everything the TCP core keeps about one peer connection, grouped by the
// lock that guards each part: the link's send_mutex, or the TcpCore's
// poll_mutex_ or mutex_.
#pragma once

#include <atomic>
#include <deque>
#include <memory>
#include <string>

#include "common/thread_annotations.h"
#include "transport/tcp/matcher.h"
#include "transport/tcp/outbox.h"
#include "transport/tcp/peer_state.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"

namespace kolo::transport::tcp {

// Where the body of the frame being read goes.
enum class Sink {
  kPosted,      // straight into a posted receive's buffer (no copy)
  kUnexpected,  // into a fresh buffer; a later receive copies it out
  kControl,     // ABORT / GOODBYE text
  kDiscard,     // poisoned context, size mismatch: read and drop
};

// Receive state machine of one connection (part of PeerReceiver).
struct FrameReader {
  bool in_body = false;  // false: reading the header
  FrameHeader header;
  size_t header_got = 0;
  Sink sink = Sink::kDiscard;
  uint8_t* body = nullptr;  // destination for kPosted / kUnexpected / kControl
  size_t body_got = 0;
  uint64_t trailer = 0;
  size_t trailer_got = 0;
  OperationPtr op;          // kPosted: the receive being filled (busy)
  UnexpectedMessage owned;  // kUnexpected / kControl: the buffer

  bool mid_frame() const { return in_body || header_got > 0; }
  void reset() { *this = FrameReader(); }
};

// The receiving side of a connection, guarded by TcpCore::poll_mutex_ (held
// by whoever runs the event loop).
struct PeerReceiver {
  FrameReader reader;
  // Bytes read from the socket but not yet parsed: small frames (and the
  // start of large ones) come in one recv() with their header instead of
  // one call for the header and another for the body. Whatever stays here
  // after a poll must be parsed by the next one, which no epoll event
  // announces (see TcpCore::poll_once).
  static constexpr size_t kStageBytes = 4096;
  std::unique_ptr<uint8_t[]> stage = std::make_unique_for_overwrite<uint8_t[]>(kStageBytes);
  size_t stage_begin = 0;
  size_t stage_end = 0;
  bool staged() const { return stage_begin < stage_end; }
  // SO_RCVLOWAT now set on fd (see TcpCore::read_step).
  int rcvlowat = 1;
  // When bytes last arrived from this peer; silence past peer_timeout means
  // it is lost even though the connection is open.
  Clock::time_point last_received = Clock::now();
};

// Whether the peer is still there; guarded by TcpCore::mutex_.
struct PeerLiveness {
  PeerState state = PeerState::kOpen;
  std::string gone_reason;  // "connection closed by peer"
};

// An unexpected DATA frame being read right now, so an irecv posted
// meanwhile can adopt it: the progress thread then copies what has arrived
// and reads the rest straight into the receive's buffer. Guarded by
// TcpCore::mutex_.
struct InFlightFrame {
  bool reading = false;
  Tag tag = 0;
  uint64_t length = 0;
  OperationPtr adopter;
};

struct PeerLink {
  int rank = -1;
  std::string name;  // "rank 3 (host b)"
  UniqueFd fd;

  // Sending side. Lock order: send_mutex, then TcpCore::mutex_ (never the
  // other way round).
  Mutex send_mutex;
  std::deque<OutFrame> outbox KOLO_GUARDED_BY(send_mutex);  // front() is being written
  bool want_writable KOLO_GUARDED_BY(send_mutex) = false;   // EPOLLOUT is registered for fd
  bool send_failed KOLO_GUARDED_BY(send_mutex) = false;     // a write failed; nothing more goes out
  // When the last frame was queued: a link idle since heartbeat_interval()
  // gets a heartbeat.
  Clock::time_point last_queued KOLO_GUARDED_BY(send_mutex) = Clock::now();

  // The mutexes below live in the TcpCore, so every access names them.
  LockedBy<PeerReceiver> receiver;    // TcpCore::poll_mutex_
  LockedBy<PeerLiveness> liveness;    // TcpCore::mutex_
  LockedBy<InFlightFrame> in_flight;  // TcpCore::mutex_
  // Set together with in_flight's adopter, read by the progress thread
  // without the lock between reads to notice an adoption cheaply.
  std::atomic<bool> adoption_pending{false};
};

}  // namespace kolo::transport::tcp
