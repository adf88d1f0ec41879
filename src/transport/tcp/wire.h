// Byte layouts on a TCP data connection. Both ends run the same build on
// the same architecture (x86-64/aarch64, little-endian), so structs travel as
// their native bytes; the magic numbers catch a stray or mismatched peer.
//
// After the hello exchange a connection carries frames:
//   header {magic, kind, tag, length} | body (length bytes) | trailer (8 bytes)
// The trailer is what commits a message: kCommit means the body is the real
// message. A sender that aborts while a large body is half written cannot
// leave the stream mid-frame (the ABORT that carries the reason must follow
// on a frame boundary), and must stop reading the caller's buffer at once, so
// it pads the rest of the body with zeros and writes kVoid; the receiver
// drops a voided body instead of completing a receive with garbage.
#pragma once

#include <cstdint>

#include "transport/context.h"

namespace kolo::transport::tcp {

enum class FrameKind : uint32_t {
  kData = 1,     // a message for the receive posted with `tag`
  kAbort = 2,    // body: "<origin rank>\n<reason>"; the sender is poisoned
  kGoodbye = 3,  // the sender's context is being destroyed cleanly
  // Empty body; sent on a connection that has carried nothing for a while,
  // so the receiver can tell a quiet peer from a stopped one (peer_timeout).
  kHeartbeat = 4,
};

struct FrameHeader {
  uint32_t magic = kMagic;
  FrameKind kind = FrameKind::kData;
  Tag tag = 0;
  uint64_t length = 0;

  static constexpr uint32_t kMagic = 0x4b4f4c46;  // "KOLF"
};
static_assert(sizeof(FrameHeader) == 24);

constexpr uint64_t kTrailerCommit = 0x544d4d4f434f4c4bULL;  // "KLOCOMMT"
constexpr uint64_t kTrailerVoid = 0x44494f5644494f56ULL;    // "VOIDVOID"

// Control frames are small; a larger length means a corrupt stream.
constexpr uint64_t kMaxControlBody = 64 * 1024;

// Sent by the connecting (higher) rank right after connect().
struct Hello {
  uint64_t magic = kMagic;
  // The acceptor's nonce, read from the store: proves the connector belongs
  // to this mesh (this job and round), not a stale one.
  uint64_t acceptor_nonce = 0;
  // The connector's own nonce, which the acceptor checks against the store.
  uint64_t connector_nonce = 0;
  int32_t connector_rank = -1;
  int32_t size = 0;

  static constexpr uint64_t kMagic = 0x4f4c4c4548414c4bULL;  // "KLAHELLO"
};

// The acceptor's answer; sent only when the hello checks out.
struct HelloReply {
  uint64_t magic = kMagic;
  int32_t acceptor_rank = -1;
  int32_t pad = 0;

  static constexpr uint64_t kMagic = 0x594c504552414c4bULL;  // "KLAREPLY"
};

}  // namespace kolo::transport::tcp
