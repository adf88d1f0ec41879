// One posted send or receive, shared by the caller's Request, the matcher or
// outbox that holds it, and the progress thread that fills or drains it.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>

#include "common/thread_annotations.h"
#include "transport/context.h"
#include "transport/tcp/operation_state.h"

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

  struct Progress {
    // The transport may still read or write `data` until kFinished, so a
    // Request finishes only then and the caller can free its buffer the
    // moment wait() returns or throws.
    OperationState state = OperationState::kCreated;
    std::exception_ptr error;  // set when failed
  };
  // Guarded by the TcpCore's mutex_ (every access names it).
  LockedBy<Progress> progress;
};

using OperationPtr = std::shared_ptr<Operation>;

}  // namespace kolo::transport::tcp
