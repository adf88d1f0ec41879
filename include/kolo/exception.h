// The base of every exception Kolo throws, public API and internals alike, so a C++ caller that
// catches kolo::Exception catches every Kolo error, and status() carries the same code and message
// the C API and the Python bindings report.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>

#include "kolo/status.h"

namespace kolo {

class Exception : public std::runtime_error {
 public:
  // what() is the status as text ("invalid argument: ..."), as the public API throws it.
  explicit Exception(Status status)
      : std::runtime_error(status.ToString()), status_(std::move(status)) {}

  StatusCode code() const { return status_.code(); }
  const Status& status() const { return status_; }

 protected:
  // what() is the bare message: the internal exceptions (src/common/error.h), whose text is
  // nested into other messages ("... (during allreduce of 'x')") before it reaches anyone.
  Exception(StatusCode code, const std::string& message)
      : std::runtime_error(message), status_(code, message) {}

 private:
  Status status_;
};

}  // namespace kolo
