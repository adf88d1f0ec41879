#include "rendezvous/store_wire.h"

#include <algorithm>

#include "common/byte_codec.h"

namespace kolo::rendezvous::wire {
namespace {

using codec::Reader;
using codec::Writer;

bool is_known_status(uint8_t code) {
  return code <= static_cast<uint8_t>(StatusCode::kInternal);
}

template <typename T>
Decoded<T> finish(Reader& in, T value) {
  in.expect_end();
  if (!in.ok()) return Decoded<T>::fail(in.error());
  return Decoded<T>::ok(std::move(value));
}

}  // namespace

const char* opcode_name(Opcode op) {
  switch (op) {
    case Opcode::kPing:
      return "PING";
    case Opcode::kSet:
      return "SET";
    case Opcode::kGet:
      return "GET";
    case Opcode::kWait:
      return "WAIT";
    case Opcode::kAdd:
      return "ADD";
    case Opcode::kCompareSet:
      return "COMPARE_SET";
    case Opcode::kRemove:
      return "REMOVE";
    case Opcode::kReply:
      return "REPLY";
  }
  return "UNKNOWN";
}

bool is_request_opcode(Opcode op) {
  auto v = static_cast<uint8_t>(op);
  return v >= static_cast<uint8_t>(Opcode::kPing) && v <= static_cast<uint8_t>(Opcode::kRemove);
}

Bytes encode_hello(const Hello& hello) {
  Writer out(kHelloBytes);
  out.u32(kHelloMagic);
  out.u8(hello.version);
  out.u8(static_cast<uint8_t>(hello.role));
  out.u8(0);
  out.u8(0);
  out.raw(hello.nonce);
  return out.take();
}

Decoded<Hello> decode_hello(std::span<const uint8_t> bytes) {
  if (bytes.size() != kHelloBytes)
    return Decoded<Hello>::fail("hello is " + std::to_string(bytes.size()) + " bytes, expected " +
                                std::to_string(kHelloBytes));
  Reader in(bytes);
  Hello hello;
  if (in.u32() != kHelloMagic)
    return Decoded<Hello>::fail("bad hello magic (not a Kolo store peer)");
  hello.version = in.u8();
  uint8_t role = in.u8();
  if (role != static_cast<uint8_t>(Role::kServer) && role != static_cast<uint8_t>(Role::kClient))
    return Decoded<Hello>::fail("bad hello role " + std::to_string(role));
  hello.role = static_cast<Role>(role);
  if (in.u8() != 0 || in.u8() != 0)
    return Decoded<Hello>::fail("hello reserved bytes are not zero");
  std::copy_n(bytes.begin() + 8, kNonceBytes, hello.nonce.begin());
  return Decoded<Hello>::ok(hello);
}

Bytes encode_frame(FrameHeader header, std::span<const uint8_t> payload, const SessionKey& key) {
  Writer out(kFrameOverheadBytes + payload.size());
  out.u32(kFrameMagic);
  out.u8(kVersion);
  out.u8(static_cast<uint8_t>(header.opcode));
  out.u8(static_cast<uint8_t>(header.status));
  out.u8(0);
  out.u64(header.seq);
  out.u64(header.reply_to);
  out.u32(static_cast<uint32_t>(payload.size()));
  out.raw(payload);
  Bytes frame = out.take();
  Mac mac = compute_mac(key, frame);
  frame.insert(frame.end(), mac.begin(), mac.end());
  return frame;
}

Decoded<FrameHeader> decode_frame_header(std::span<const uint8_t> bytes, size_t max_frame_bytes) {
  using D = Decoded<FrameHeader>;
  if (bytes.size() < kHeaderBytes) return D::fail("truncated frame header");
  Reader in(bytes.first(kHeaderBytes));
  FrameHeader h;
  if (in.u32() != kFrameMagic) return D::fail("bad frame magic");
  uint8_t version = in.u8();
  if (version != kVersion)
    return D::fail("frame version " + std::to_string(version) + ", expected " +
                   std::to_string(kVersion));
  uint8_t opcode = in.u8();
  h.opcode = static_cast<Opcode>(opcode);
  if (!is_request_opcode(h.opcode) && h.opcode != Opcode::kReply)
    return D::fail("unknown opcode " + std::to_string(opcode));
  uint8_t status = in.u8();
  if (!is_known_status(status)) return D::fail("unknown status code " + std::to_string(status));
  h.status = static_cast<StatusCode>(status);
  if (in.u8() != 0) return D::fail("frame reserved byte is not zero");
  h.seq = in.u64();
  h.reply_to = in.u64();
  h.payload_bytes = in.u32();
  if (h.opcode != Opcode::kReply && (h.status != StatusCode::kOk || h.reply_to != 0))
    return D::fail("request frame carries a status or reply_to");
  // 64-bit arithmetic: payload_bytes is at most 2^32-1, so this cannot wrap.
  uint64_t frame_bytes = uint64_t{h.payload_bytes} + kFrameOverheadBytes;
  if (frame_bytes > max_frame_bytes)
    return D::fail("frame of " + std::to_string(frame_bytes) + " bytes exceeds the limit of " +
                   std::to_string(max_frame_bytes) + " bytes");
  return D::ok(h);
}

SplitFrame split_frame(std::span<const uint8_t> buffer, size_t max_frame_bytes) {
  SplitFrame out;
  if (buffer.size() < kHeaderBytes) return out;
  auto header = decode_frame_header(buffer, max_frame_bytes);
  if (!header) {
    out.status = SplitFrame::Status::kError;
    out.error = header.error;
    return out;
  }
  out.header = *header.value;
  size_t total = kFrameOverheadBytes + out.header.payload_bytes;
  if (buffer.size() < total) return out;
  out.status = SplitFrame::Status::kFrame;
  out.frame_bytes = total;
  out.signed_bytes = buffer.first(kHeaderBytes + out.header.payload_bytes);
  out.payload = out.signed_bytes.subspan(kHeaderBytes);
  out.mac = buffer.subspan(out.signed_bytes.size(), kMacBytes);
  return out;
}

bool frame_mac_valid(const SessionKey& key, const SplitFrame& frame) {
  return frame.status == SplitFrame::Status::kFrame &&
         mac_matches(key, frame.signed_bytes, frame.mac);
}

Bytes encode_request(const Request& r) {
  Writer out;
  switch (r.opcode) {
    case Opcode::kPing:
    case Opcode::kReply:
      break;
    case Opcode::kSet:
      out.blob(r.key);
      out.blob(r.value);
      break;
    case Opcode::kGet:
    case Opcode::kRemove:
      out.blob(r.key);
      break;
    case Opcode::kWait:
      out.u32(r.timeout_ms);
      out.u32(static_cast<uint32_t>(r.keys.size()));
      for (const auto& k : r.keys) out.blob(k);
      break;
    case Opcode::kAdd:
      out.blob(r.key);
      out.u64(static_cast<uint64_t>(r.delta));
      break;
    case Opcode::kCompareSet:
      out.blob(r.key);
      out.u8(r.expected.has_value() ? 1 : 0);
      if (r.expected) out.blob(*r.expected);
      out.blob(r.value);
      break;
  }
  return out.take();
}

Decoded<Request> decode_request(Opcode opcode, std::span<const uint8_t> payload) {
  if (!is_request_opcode(opcode))
    return Decoded<Request>::fail(std::string(opcode_name(opcode)) + " is not a request");
  Reader in(payload);
  Request r;
  r.opcode = opcode;
  switch (opcode) {
    case Opcode::kPing:
    case Opcode::kReply:
      break;
    case Opcode::kSet:
      r.key = in.text("key");
      r.value = in.blob("value");
      break;
    case Opcode::kGet:
    case Opcode::kRemove:
      r.key = in.text("key");
      break;
    case Opcode::kWait: {
      r.timeout_ms = in.u32();
      uint32_t count = in.u32();
      // Each key needs at least its 4-byte length, which bounds the
      // reservation by the payload actually received.
      if (in.ok() && count > in.left() / 4) {
        in.fail("WAIT claims " + std::to_string(count) + " keys in " + std::to_string(in.left()) +
                " bytes");
        break;
      }
      r.keys.reserve(count);
      for (uint32_t i = 0; i < count && in.ok(); ++i) r.keys.push_back(in.text("key"));
      break;
    }
    case Opcode::kAdd:
      r.key = in.text("key");
      r.delta = static_cast<int64_t>(in.u64());
      break;
    case Opcode::kCompareSet:
      r.key = in.text("key");
      if (in.boolean("expected-present")) r.expected = in.blob("expected");
      r.value = in.blob("desired");
      break;
  }
  return finish(in, std::move(r));
}

Bytes encode_reply(Opcode request_opcode, const Reply& reply) {
  Writer out;
  switch (request_opcode) {
    case Opcode::kGet:
      out.u8(reply.value.has_value() ? 1 : 0);
      if (reply.value) out.blob(*reply.value);
      break;
    case Opcode::kAdd:
      out.u64(static_cast<uint64_t>(reply.number));
      break;
    case Opcode::kCompareSet:
      out.u8(reply.flag ? 1 : 0);
      out.u8(reply.value.has_value() ? 1 : 0);
      if (reply.value) out.blob(*reply.value);
      break;
    case Opcode::kRemove:
      out.u8(reply.flag ? 1 : 0);
      break;
    case Opcode::kPing:
    case Opcode::kSet:
    case Opcode::kWait:
    case Opcode::kReply:
      break;
  }
  return out.take();
}

Decoded<Reply> decode_reply(Opcode request_opcode, std::span<const uint8_t> payload) {
  if (!is_request_opcode(request_opcode))
    return Decoded<Reply>::fail(std::string(opcode_name(request_opcode)) + " is not a request");
  Reader in(payload);
  Reply r;
  switch (request_opcode) {
    case Opcode::kGet:
      if (in.boolean("value-present")) r.value = in.blob("value");
      break;
    case Opcode::kAdd:
      r.number = static_cast<int64_t>(in.u64());
      break;
    case Opcode::kCompareSet:
      r.flag = in.boolean("swapped");
      if (in.boolean("current-present")) r.value = in.blob("current");
      break;
    case Opcode::kRemove:
      r.flag = in.boolean("existed");
      break;
    case Opcode::kPing:
    case Opcode::kSet:
    case Opcode::kWait:
    case Opcode::kReply:
      break;
  }
  return finish(in, std::move(r));
}

}  // namespace kolo::rendezvous::wire
