// Status: the value that crosses API boundaries (C API, bindings, handles).
// Inside the core, failures travel as the typed exceptions of
// src/common/error.h and are turned into a Status at the boundary.
#pragma once

#include <string>
#include <string_view>
#include <utility>

namespace kolo {

enum class StatusCode : int {
  kOk = 0,
  kInvalidArgument = 1,
  kTimeout = 2,
  kPeerLost = 3,
  kIoError = 4,
  kAborted = 5,
  kUnauthenticated = 6,
  kNotFound = 7,
  kInternal = 8,
  // An elastic job left this worker out of its next round (see kolo.elastic).
  kRemoved = 9,
};

std::string_view status_code_name(StatusCode code);

class Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}
  static Status Ok() { return {}; }

  bool ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  std::string ToString() const;

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

}  // namespace kolo
