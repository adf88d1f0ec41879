// Typed exceptions used inside Kolo. Each is a kolo::Exception (include/kolo/exception.h) carrying
// the StatusCode it stands for, so a boundary reads its Status without a table of types.
#pragma once

#include <exception>
#include <string>

#include "kolo/exception.h"
#include "kolo/status.h"

namespace kolo {

// what() is the bare message, unlike a kolo::Exception built from a Status.
class Error : public Exception {
 public:
  Error(StatusCode code, const std::string& what) : Exception(code, what) {}
};

#define KOLO_DEFINE_ERROR(Name, Code)                                         \
  class Name : public Error {                                                 \
   public:                                                                    \
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

// Converts whatever is in flight (a kolo::Exception, another std::exception, or
// anything else) into a Status. Call only from inside a catch block.
Status status_from_current_exception();

// The message of a captured exception ("unknown error" when it is not a
// std::exception), for logs and for passing a root cause on.
std::string message_of(const std::exception_ptr& error);

}  // namespace kolo
