// One posted send or receive, shared by the caller's Request, the matcher or
// outbox that holds it, and the progress thread that fills or drains it.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>

#include "transport/context.h"

namespace kolo::transport::tcp {

struct Operation {
  enum class Kind { kSend, kRecv };

  Operation(Kind kind_, int peer_, Tag tag_, void* data_, size_t bytes_)
      : kind(kind_), peer(peer_), tag(tag_), data(data_), bytes(bytes_) {}

  const Kind kind;
  const int peer;
  const Tag tag;
  void* const data;
  const size_t bytes;

  // All fields below are guarded by TcpCore::mutex_.
  bool done = false;         // succeeded, or failed with `error`
  std::exception_ptr error;  // set when failed
  // The transport may still read or write `data` (a receive being filled, a
  // send in an outbox). A Request finishes only when done && !busy, so the
  // caller can free its buffer the moment wait() returns or throws.
  bool busy = false;
  bool posted = false;  // a receive waiting in the Matcher: still cancellable

  bool finished() const { return done && !busy; }
};

using OperationPtr = std::shared_ptr<Operation>;

}  // namespace kolo::transport::tcp
