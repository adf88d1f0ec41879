// The sending half of a peer connection: frames queued behind the one being
// written, and the non-blocking writer that pushes them out.
#pragma once

#include <cstddef>
#include <deque>
#include <string>

#include "transport/tcp/operation.h"
#include "transport/tcp/wire.h"

namespace kolo::transport::tcp {

struct OutFrame {
  FrameHeader header;
  // The caller's bytes; nullptr once the frame is voided (zeros are sent).
  const uint8_t* body = nullptr;
  uint64_t trailer = kTrailerCommit;
  size_t written = 0;      // bytes of header + body + trailer already sent
  OperationPtr op;         // the send it carries; null for control frames
  std::string owned_body;  // a control frame's body (ABORT reason)

  size_t total() const { return sizeof(header) + header.length + sizeof(trailer); }
  bool started() const { return written > 0; }
  bool complete() const { return written == total(); }
  // Stops reading the caller's buffer: the rest of the body goes out as
  // zeros, and the trailer tells the receiver to drop the message.
  void make_void() {
    body = nullptr;
    trailer = kTrailerVoid;
  }
};

OutFrame data_frame(Tag tag, const void* data, size_t bytes, OperationPtr op);
OutFrame control_frame(FrameKind kind, std::string body);

enum class WriteStatus { kComplete, kWouldBlock, kFailed };

// Writes as much of `frame` as the socket takes without blocking.
// kFailed sets *err (errno; EPIPE / ECONNRESET when the peer is gone).
WriteStatus write_frame(int fd, OutFrame& frame, int* err);

}  // namespace kolo::transport::tcp
