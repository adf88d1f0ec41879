#include "transport/tcp/outbox.h"

#include <sys/socket.h>
#include <sys/uio.h>

#include <algorithm>
#include <cerrno>

namespace kolo::transport::tcp {

namespace {
// Source of padding for voided bodies; read-only, so sharing it is safe.
constexpr size_t kZeroBytes = 64 * 1024;
const uint8_t kZeros[kZeroBytes] = {};
}  // namespace

OutFrame data_frame(Tag tag, const void* data, size_t bytes, OperationPtr op) {
  OutFrame f;
  f.header.kind = FrameKind::kData;
  f.header.tag = tag;
  f.header.length = bytes;
  f.body = static_cast<const uint8_t*>(data);
  f.op = std::move(op);
  return f;
}

OutFrame control_frame(FrameKind kind, std::string body) {
  OutFrame f;
  f.header.kind = kind;
  f.header.length = body.size();
  f.owned_body = std::move(body);
  f.body = reinterpret_cast<const uint8_t*>(f.owned_body.data());
  return f;
}

WriteStatus write_frame(int fd, OutFrame& frame, int* err) {
  // The owned body may have moved with the frame (std::string SSO), so
  // control frames re-point at it each time.
  if (!frame.owned_body.empty() || frame.header.kind != FrameKind::kData)
    frame.body = reinterpret_cast<const uint8_t*>(frame.owned_body.data());
  const size_t header_size = sizeof(frame.header);
  const size_t body_end = header_size + frame.header.length;
  while (!frame.complete()) {
    iovec iov[3];
    int count = 0;
    const size_t pos = frame.written;
    if (pos < header_size)
      iov[count++] = {reinterpret_cast<uint8_t*>(&frame.header) + pos, header_size - pos};
    bool body_covered = true;  // this call's iovecs reach the end of the body
    if (pos < body_end) {
      size_t offset = std::max(pos, header_size) - header_size;
      size_t left = frame.header.length - offset;
      if (frame.body != nullptr) {
        iov[count++] = {const_cast<uint8_t*>(frame.body) + offset, left};
      } else {
        iov[count++] = {const_cast<uint8_t*>(kZeros), std::min(left, kZeroBytes)};
        body_covered = left <= kZeroBytes;
      }
    }
    if (body_covered) {
      size_t trailer_done = pos > body_end ? pos - body_end : 0;
      iov[count++] = {reinterpret_cast<uint8_t*>(&frame.trailer) + trailer_done,
                      sizeof(frame.trailer) - trailer_done};
    }
    msghdr msg{};
    msg.msg_iov = iov;
    msg.msg_iovlen = static_cast<size_t>(count);
    ssize_t n = ::sendmsg(fd, &msg, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (n > 0) {
      frame.written += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return WriteStatus::kWouldBlock;
    *err = (n == 0) ? EPIPE : errno;
    return WriteStatus::kFailed;
  }
  return WriteStatus::kComplete;
}

}  // namespace kolo::transport::tcp
