// store_wire: the TCP store's byte format, as pure functions so tests and the
// fuzzer reach every decoder directly. Decoders trust no length, never throw
// on bad input and never allocate more than the input could justify; they
// return the reason instead.
//
// A connection starts with a Hello from each side (magic, version, role,
// nonce; unauthenticated). Then every message is a frame:
//
//   header (28 bytes, big-endian)                   payload   mac (32 bytes)
//   magic u32 | version u8 | opcode u8 | status u8 | reserved u8
//   | seq u64 | reply_to u64 | payload_bytes u32
//
// mac = HMAC-SHA256(session key of the sender's direction, header || payload).
// `seq` counts the frames a side has sent on this connection (0, 1, 2, ...)
// and the receiver insists on it, so frames cannot be dropped, replayed or
// reordered. Replies carry reply_to = the seq of the request they answer,
// because a parked WAIT is answered after later requests.
//
// A server takes at most 4 KiB as a connection's first frame and expects it
// within its handshake timeout; TcpStoreClient opens with a PING, which also
// surfaces a wrong secret at once.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "kolo/status.h"
#include "rendezvous/store.h"
#include "rendezvous/store_auth.h"

namespace kolo::rendezvous::wire {

inline constexpr uint32_t kHelloMagic = 0x4B4F4C48;  // "KOLH"
inline constexpr uint32_t kFrameMagic = 0x4B4F4C46;  // "KOLF"
inline constexpr uint8_t kVersion = 1;
inline constexpr size_t kHelloBytes = 8 + kNonceBytes;
inline constexpr size_t kHeaderBytes = 28;
inline constexpr size_t kFrameOverheadBytes = kHeaderBytes + kMacBytes;
inline constexpr size_t kDefaultMaxFrameBytes = size_t{64} << 20;
inline constexpr size_t kMinMaxFrameBytes = 256;

enum class Role : uint8_t { kServer = 'S', kClient = 'C' };

enum class Opcode : uint8_t {
  kPing = 1,  // checks the credentials; empty payload both ways
  kSet = 2,
  kGet = 3,
  kWait = 4,
  kAdd = 5,
  kCompareSet = 6,
  kRemove = 7,
  kReply = 0x80,
};

const char* opcode_name(Opcode op);
bool is_request_opcode(Opcode op);

struct Hello {
  Role role = Role::kClient;
  uint8_t version = kVersion;
  Nonce nonce{};
  bool operator==(const Hello&) const = default;
};

struct FrameHeader {
  Opcode opcode = Opcode::kPing;
  StatusCode status = StatusCode::kOk;  // replies only; an error reply's payload is its message
  uint64_t seq = 0;
  uint64_t reply_to = 0;  // replies only
  uint32_t payload_bytes = 0;
  bool operator==(const FrameHeader&) const = default;
};

// One request, flat: each opcode uses the fields named beside them.
struct Request {
  Opcode opcode = Opcode::kPing;
  std::string key;                // set, get, add, compare_set, remove
  Bytes value;                    // set: the value; compare_set: desired
  std::optional<Bytes> expected;  // compare_set
  int64_t delta = 0;              // add
  std::vector<std::string> keys;  // wait
  uint32_t timeout_ms = 0;        // wait
  bool operator==(const Request&) const = default;
};

// The body of a successful reply, flat like Request.
struct Reply {
  std::optional<Bytes> value;  // get: the value if present; compare_set: current value
  bool flag = false;           // compare_set: swapped; remove: existed
  int64_t number = 0;          // add: the new counter value
  bool operator==(const Reply&) const = default;
};

// A decoded value, or why the bytes were rejected.
template <typename T>
struct Decoded {
  std::optional<T> value;
  std::string error;
  static Decoded ok(T v) { return Decoded{std::move(v), {}}; }
  static Decoded fail(std::string why) { return Decoded{std::nullopt, std::move(why)}; }
  explicit operator bool() const { return value.has_value(); }
};

Bytes encode_hello(const Hello& hello);
Decoded<Hello> decode_hello(std::span<const uint8_t> bytes);

// Header || payload || MAC. `header.payload_bytes` is filled in from `payload`.
Bytes encode_frame(FrameHeader header, std::span<const uint8_t> payload, const SessionKey& key);

// Checks magic, version, opcode, status and reserved bits, and that the frame
// (header + payload + MAC) is at most `max_frame_bytes`. Needs kHeaderBytes.
Decoded<FrameHeader> decode_frame_header(std::span<const uint8_t> bytes, size_t max_frame_bytes);

// Finds the first frame in a receive buffer. kError is final for the stream;
// the header's length is judged as soon as the header is in, before any
// payload is buffered.
struct SplitFrame {
  enum class Status { kNeedMore, kFrame, kError } status = Status::kNeedMore;
  FrameHeader header;
  std::span<const uint8_t> signed_bytes;  // header || payload: what the MAC covers
  std::span<const uint8_t> payload;
  std::span<const uint8_t> mac;
  size_t frame_bytes = 0;  // to consume from the buffer
  std::string error;
};
SplitFrame split_frame(std::span<const uint8_t> buffer, size_t max_frame_bytes);

bool frame_mac_valid(const SessionKey& key, const SplitFrame& frame);

Bytes encode_request(const Request& request);
Decoded<Request> decode_request(Opcode opcode, std::span<const uint8_t> payload);

// A successful reply to a request of `request_opcode`.
Bytes encode_reply(Opcode request_opcode, const Reply& reply);
Decoded<Reply> decode_reply(Opcode request_opcode, std::span<const uint8_t> payload);

}  // namespace kolo::rendezvous::wire
