// Typed exceptions used inside the core. Each carries the StatusCode it maps
// to, so the API boundary converts any of them to a Status in one place.
#pragma once

#include <exception>
#include <stdexcept>
#include <string>

#include "kolo/status.h"

namespace kolo {

class Error : public std::runtime_error {
 public:
  Error(StatusCode code, const std::string& what) : std::runtime_error(what), code_(code) {}
  StatusCode code() const { return code_; }
  Status status() const { return Status(code_, what()); }

 private:
  StatusCode code_;
};

#define KOLO_DEFINE_ERROR(Name, Code) \
  class Name : public Error {         \
   public:                            \
    explicit Name(const std::string& what) : Error(StatusCode::Code, what) {} \
  }

KOLO_DEFINE_ERROR(InvalidArgument, kInvalidArgument);
KOLO_DEFINE_ERROR(TimeoutError, kTimeout);
KOLO_DEFINE_ERROR(PeerLostError, kPeerLost);
KOLO_DEFINE_ERROR(IoError, kIoError);
KOLO_DEFINE_ERROR(AbortedError, kAborted);
KOLO_DEFINE_ERROR(AuthError, kUnauthenticated);
KOLO_DEFINE_ERROR(InternalError, kInternal);
KOLO_DEFINE_ERROR(WorkerRemovedError, kRemoved);

#undef KOLO_DEFINE_ERROR

// Converts whatever is in flight (a kolo::Error, another std::exception, or
// anything else) into a Status. Call only from inside a catch block.
Status status_from_current_exception();

// The message of a captured exception ("unknown error" when it is not a
// std::exception), for logs and for passing a root cause on.
std::string message_of(const std::exception_ptr& error);

}  // namespace kolo
