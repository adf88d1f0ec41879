// libFuzzer target for the TCP store's decoders (src/rendezvous/store_wire.h):
// hello, frame splitting, MAC checks, request and reply payloads. Beyond "no
// crash", it checks that anything a decoder accepts re-encodes to exactly
// the bytes it came from (the encoding is canonical), so encoder and decoder
// cannot drift apart.
#include <cstdint>
#include <cstdlib>
#include <span>

#include "rendezvous/store_wire.h"
#include "store_frame_fuzz_input.h"

namespace {

using namespace kolo::rendezvous;

void require(bool condition) {
  if (!condition) std::abort();
}

bool same(std::span<const uint8_t> a, const Bytes& b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin());
}

void check_payload_decoders(const wire::SplitFrame& frame) {
  auto payload = frame.payload;
  if (wire::is_request_opcode(frame.header.opcode)) {
    auto request = wire::decode_request(frame.header.opcode, payload);
    if (request) require(same(payload, wire::encode_request(*request.value)));
  }
  for (uint8_t op = 0; op <= 8; ++op) {  // every opcode, valid or not
    auto opcode = static_cast<wire::Opcode>(op);
    auto reply = wire::decode_reply(opcode, payload);
    if (reply) require(same(payload, wire::encode_reply(opcode, *reply.value)));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::span<const uint8_t> in(data, size);
  Nonce client_nonce{};
  if (in.size() >= wire::kHelloBytes) {
    auto hello = wire::decode_hello(in.first(wire::kHelloBytes));
    if (hello) {
      require(same(in.first(wire::kHelloBytes), wire::encode_hello(*hello.value)));
      client_nonce = hello.value->nonce;
    }
    in = in.subspan(wire::kHelloBytes);
  }
  const SessionKey key = fuzz::frame_key(client_nonce);
  uint64_t expected_seq = 0;
  while (true) {
    wire::SplitFrame frame = wire::split_frame(in, fuzz::kMaxFrameBytes);
    if (frame.status != wire::SplitFrame::Status::kFrame) break;
    require(frame.frame_bytes <= in.size() && frame.frame_bytes <= fuzz::kMaxFrameBytes);
    require(frame.payload.size() == frame.header.payload_bytes);
    // Decoders run whether or not the MAC holds: they must be safe on any
    // bytes, and mutated inputs rarely keep a valid MAC.
    check_payload_decoders(frame);
    if (wire::frame_mac_valid(key, frame) && frame.header.seq == expected_seq) ++expected_seq;
    in = in.subspan(frame.frame_bytes);
  }
  return 0;
}
