#include "rendezvous/store_wire.h"

#include <gtest/gtest.h>

namespace kolo::rendezvous::wire {
namespace {

SessionKey test_key() {
  return derive_session_keys("k", Nonce{}, Nonce{}).client_to_server;
}

std::vector<Request> sample_requests() {
  std::vector<Request> out;
  Request ping;
  out.push_back(ping);
  Request set{Opcode::kSet, std::string("k\0ey", 4), {0, 1, 0, 255}, std::nullopt, 0, {}, 0};
  out.push_back(set);
  out.push_back(Request{Opcode::kGet, "g", {}, std::nullopt, 0, {}, 0});
  out.push_back(Request{Opcode::kWait, "", {}, std::nullopt, 0, {"a", "", "ccc"}, 1234});
  out.push_back(Request{Opcode::kAdd, "n", {}, std::nullopt, -42, {}, 0});
  out.push_back(Request{Opcode::kCompareSet, "c", {9}, Bytes{}, 0, {}, 0});
  out.push_back(Request{Opcode::kCompareSet, "c", {}, std::nullopt, 0, {}, 0});
  out.push_back(Request{Opcode::kRemove, "r", {}, std::nullopt, 0, {}, 0});
  return out;
}

TEST(StoreWire, RequestsRoundTrip) {
  for (const Request& r : sample_requests()) {
    auto decoded = decode_request(r.opcode, encode_request(r));
    ASSERT_TRUE(decoded) << opcode_name(r.opcode) << ": " << decoded.error;
    EXPECT_EQ(*decoded.value, r) << opcode_name(r.opcode);
  }
}

TEST(StoreWire, RepliesRoundTrip) {
  Reply get_hit{Bytes{0, 0, 7}, false, 0};
  Reply get_miss{};
  Reply add{std::nullopt, false, INT64_MIN};
  Reply cas{Bytes{}, true, 0};
  Reply removed{std::nullopt, true, 0};
  EXPECT_EQ(*decode_reply(Opcode::kGet, encode_reply(Opcode::kGet, get_hit)).value, get_hit);
  EXPECT_EQ(*decode_reply(Opcode::kGet, encode_reply(Opcode::kGet, get_miss)).value, get_miss);
  EXPECT_EQ(*decode_reply(Opcode::kAdd, encode_reply(Opcode::kAdd, add)).value, add);
  EXPECT_EQ(*decode_reply(Opcode::kCompareSet, encode_reply(Opcode::kCompareSet, cas)).value, cas);
  EXPECT_EQ(*decode_reply(Opcode::kRemove, encode_reply(Opcode::kRemove, removed)).value, removed);
  EXPECT_TRUE(decode_reply(Opcode::kSet, {}));
}

TEST(StoreWire, EveryTruncationOfARequestIsRejected) {
  for (const Request& r : sample_requests()) {
    Bytes full = encode_request(r);
    for (size_t n = 0; n < full.size(); ++n)
      EXPECT_FALSE(decode_request(r.opcode, std::span(full).first(n)))
          << opcode_name(r.opcode) << n;
    full.push_back(0);
    EXPECT_FALSE(decode_request(r.opcode, full)) << "trailing byte accepted";
  }
}

TEST(StoreWire, LengthsLargerThanThePayloadAreRejectedWithoutAllocating) {
  Bytes huge_key = {0xFF, 0xFF, 0xFF, 0xFF, 'x'};
  auto r = decode_request(Opcode::kGet, huge_key);
  EXPECT_FALSE(r);
  EXPECT_NE(r.error.find("claims"), std::string::npos) << r.error;
  Bytes many_keys = {0, 0, 0, 1, 0xFF, 0xFF, 0xFF, 0xFF};  // timeout 1, 4 billion keys
  EXPECT_FALSE(decode_request(Opcode::kWait, many_keys));
  Bytes bad_flag = {0, 0, 0, 1, 'k', 2};
  EXPECT_FALSE(decode_request(Opcode::kCompareSet, bad_flag));
  EXPECT_FALSE(decode_request(Opcode::kReply, {}));
}

TEST(StoreWire, HelloRoundTripsAndRejectsGarbage) {
  Hello hello{Role::kServer, kVersion, random_nonce()};
  Bytes bytes = encode_hello(hello);
  ASSERT_EQ(bytes.size(), kHelloBytes);
  EXPECT_EQ(*decode_hello(bytes).value, hello);
  EXPECT_FALSE(decode_hello(std::span(bytes).first(kHelloBytes - 1)));
  bytes[0] ^= 1;
  EXPECT_FALSE(decode_hello(bytes));
}

TEST(StoreWire, FramesSplitAndVerify) {
  SessionKey key = test_key();
  Bytes payload = encode_request(sample_requests()[1]);
  FrameHeader header{Opcode::kSet, StatusCode::kOk, 7, 0, 0};
  Bytes stream = encode_frame(header, payload, key);
  Bytes second = encode_frame({Opcode::kReply, StatusCode::kTimeout, 8, 3, 0}, payload, key);
  stream.insert(stream.end(), second.begin(), second.end());

  for (size_t n = 0; n < kFrameOverheadBytes + payload.size(); ++n)
    EXPECT_EQ(split_frame(std::span(stream).first(n), 1 << 20).status,
              SplitFrame::Status::kNeedMore);

  SplitFrame first = split_frame(stream, 1 << 20);
  ASSERT_EQ(first.status, SplitFrame::Status::kFrame) << first.error;
  header.payload_bytes = static_cast<uint32_t>(payload.size());
  EXPECT_EQ(first.header, header);
  EXPECT_TRUE(
      std::equal(first.payload.begin(), first.payload.end(), payload.begin(), payload.end()));
  EXPECT_TRUE(frame_mac_valid(key, first));
  EXPECT_FALSE(frame_mac_valid(derive_session_keys("k", Nonce{}, Nonce{}).server_to_client, first));

  SplitFrame next = split_frame(std::span(stream).subspan(first.frame_bytes), 1 << 20);
  ASSERT_EQ(next.status, SplitFrame::Status::kFrame);
  EXPECT_EQ(next.header.status, StatusCode::kTimeout);
  EXPECT_EQ(next.header.reply_to, 3u);

  // Any flipped bit in header or payload breaks the MAC (or the header).
  for (size_t i = 0; i < first.frame_bytes; i += 3) {
    Bytes tampered(stream.begin(), stream.begin() + static_cast<ptrdiff_t>(first.frame_bytes));
    tampered[i] ^= 0x10;
    SplitFrame f = split_frame(tampered, 1 << 20);
    EXPECT_FALSE(f.status == SplitFrame::Status::kFrame && frame_mac_valid(key, f)) << i;
  }
}

TEST(StoreWire, OversizedFrameIsRejectedFromItsHeaderAlone) {
  Bytes frame = encode_frame({Opcode::kSet, StatusCode::kOk, 0, 0, 0}, Bytes(1000), test_key());
  SplitFrame f = split_frame(std::span(frame).first(kHeaderBytes), 512);
  EXPECT_EQ(f.status, SplitFrame::Status::kError);
  EXPECT_NE(f.error.find("exceeds"), std::string::npos) << f.error;
  // A length near 4 GiB must not wrap around the limit check.
  Bytes header(frame.begin(), frame.begin() + kHeaderBytes);
  header[24] = header[25] = header[26] = header[27] = 0xFF;
  EXPECT_EQ(split_frame(header, kDefaultMaxFrameBytes).status, SplitFrame::Status::kError);
}

TEST(StoreWire, HeaderFieldsAreValidated) {
  Bytes good = encode_frame({Opcode::kGet, StatusCode::kOk, 0, 0, 0}, {}, test_key());
  auto with = [&](size_t index, uint8_t value) {
    Bytes b = good;
    b[index] = value;
    return decode_frame_header(b, 1 << 20);
  };
  EXPECT_TRUE(decode_frame_header(good, 1 << 20));
  EXPECT_FALSE(with(0, 'X'));   // magic
  EXPECT_FALSE(with(4, 9));     // version
  EXPECT_FALSE(with(5, 0));     // opcode
  EXPECT_FALSE(with(5, 0x42));  // opcode
  EXPECT_FALSE(with(6, 1));     // a status on a request
  EXPECT_FALSE(with(6, 200));   // unknown status
  EXPECT_FALSE(with(7, 1));     // reserved
  EXPECT_FALSE(with(23, 1));    // reply_to on a request
}

}  // namespace
}  // namespace kolo::rendezvous::wire
