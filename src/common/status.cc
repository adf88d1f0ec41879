#include "kolo/status.h"

namespace kolo {

std::string_view status_code_name(StatusCode code) {
  switch (code) {
    case StatusCode::kOk:
      return "OK";
    case StatusCode::kInvalidArgument:
      return "invalid argument";
    case StatusCode::kTimeout:
      return "timeout";
    case StatusCode::kPeerLost:
      return "peer lost";
    case StatusCode::kIoError:
      return "I/O error";
    case StatusCode::kAborted:
      return "aborted";
    case StatusCode::kUnauthenticated:
      return "unauthenticated";
    case StatusCode::kNotFound:
      return "not found";
    case StatusCode::kInternal:
      return "internal error";
    case StatusCode::kRemoved:
      return "removed from the job";
  }
  return "unknown status";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(status_code_name(code_)) + ": " + message_;
}

}  // namespace kolo
