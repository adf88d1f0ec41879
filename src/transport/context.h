// The transport interface that collectives are written against.
//
// A Context connects `size` ranks. Point-to-point messages are matched by
// (peer, tag): a receive posted with tag T from peer P takes the next message
// P sent to this rank with tag T, in send order. Collectives draw a fresh tag
// per operation, so concurrent operations never mix their messages.
//
// Lifetime and errors:
// - A buffer passed to isend/irecv must stay valid until its Request
//   completes (wait() returned or threw) or the Request is destroyed; the
//   destructor of an incomplete Request cancels it where the transport can,
//   otherwise it waits (bounded by the timeout).
// - A peer that disconnects fails every pending and later operation with
//   PeerLostError naming it ("rank 3 (host b) lost: connection reset").
//   Once any peer is lost, or abort() is called, the whole context is
//   poisoned: every operation fails with that root cause, and the peers are
//   told why, so the error spreads across the job instead of a hang.
// - A wait that exceeds the operation timeout throws TimeoutError naming the
//   peer and tag it was waiting on.
//
// Implementations: TCP (tcp/), several TCP streams per peer (striped_context.h)
// and a process set's view of a parent (sub_context.h). Shared memory within a
// host is not a Context: its collectives work on a SharedMemoryGroup
// (shared_memory_group.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

namespace kolo::transport {

using Tag = uint64_t;

class Request {
 public:
  virtual ~Request() = default;
  // Blocks until the operation completes. Throws PeerLostError, AbortedError
  // or TimeoutError; a receive whose incoming message has a different size
  // than the posted buffer throws InternalError (a protocol bug).
  virtual void wait() = 0;
  // Non-blocking completion check; throws the same errors as wait() once the
  // operation has failed.
  virtual bool test() = 0;
};

class Context {
 public:
  virtual ~Context() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "rank 3 (host b)": how errors and logs name a peer.
  virtual std::string peer_name(int rank) const = 0;

  virtual std::unique_ptr<Request> isend(int peer, Tag tag, const void* data, size_t bytes) = 0;
  virtual std::unique_ptr<Request> irecv(int peer, Tag tag, void* data, size_t bytes) = 0;

  // Fails every pending and future operation with `reason` and tells every
  // reachable peer, whose contexts fail with "rank R aborted: <reason>".
  virtual void abort(const std::string& reason) = 0;

  // Throws the error that poisoned the context (a peer lost or silent past
  // the peer timeout, an abort), if any; cheap enough to call every few
  // milliseconds. Lets a rank blocked elsewhere (in shared memory) learn
  // what the connections' liveness checks found.
  virtual void check_health() {}

  // Blocking conveniences.
  void send(int peer, Tag tag, const void* data, size_t bytes) {
    isend(peer, tag, data, bytes)->wait();
  }
  void recv(int peer, Tag tag, void* data, size_t bytes) { irecv(peer, tag, data, bytes)->wait(); }
};

}  // namespace kolo::transport
