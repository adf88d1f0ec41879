// The negotiation wire format: values survive a round trip, and malformed
// bytes become an InternalError naming the problem, never a crash or a
// huge allocation.
#include "core/message.h"

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "common/error.h"

namespace kolo::core {
namespace {

Request sample_request() {
  Request r;
  r.op = OpType::kAlltoall;
  r.name = "layer.\"quoted\"\n\xe2\x9c\x93";
  r.rank = 3;
  r.dtype = DataType::kBFloat16;
  r.reduction.op = ReduceOp::kMax;
  r.reduction.prescale = 0.125;
  r.reduction.postscale = -3.5;
  r.root = 2;
  r.device = 1;
  r.shape = {4, 0, 7};
  r.values = {1, 2, 1};
  r.group = "layer.a";
  r.group_size = 3;
  r.age_us = 1234567;
  return r;
}

TEST(Message, RequestsRoundTrip) {
  std::vector<Request> requests{sample_request(), Request{}};
  EXPECT_EQ(decode_requests(encode_requests(requests)), requests);
  EXPECT_TRUE(decode_requests(encode_requests({})).empty());
}

// The bytes of a request and a response with a reduction, as the codec
// wrote them before Request and Response held a Reduction: the wire format
// must not change with the types.
std::string hex(const std::string& bytes) {
  std::string out;
  for (unsigned char c : bytes) out += fmt::format("{:02x}", c);
  return out;
}

TEST(Message, ReductionFieldsKeepTheirWireBytes) {
  Request request;
  request.op = OpType::kReducescatter;
  request.name = "g";
  request.rank = 1;
  request.dtype = DataType::kFloat64;
  request.reduction = {ReduceOp::kMax, 0.5, -2.0};
  request.shape = {3};
  EXPECT_EQ(hex(encode_requests({request})),
            "01000000010400000001670000000107033fe0000000000000c000000000000000000000"
            "00ffffffff0000000100000000000000030000000000000000000000000000000000000000");
  Response response;
  response.op = OpType::kAllreduce;
  response.names = {"g"};
  response.dtype = DataType::kFloat32;
  response.reduction = {ReduceOp::kProduct, 0.25, 4.0};
  response.shapes = {{2}};
  ResponseList list;
  list.responses = {response};
  EXPECT_EQ(hex(encode_response_list(list)),
            "030000000100000000000100000001670000000006043fd000000000000040100000000000"
            "0000000000ffffffff0000000100000001000000000000000200000000000000000100000000");
}

TEST(Message, ResponseListRoundTrip) {
  ResponseList list;
  Response run;
  run.op = OpType::kAllgather;
  run.names = {"a", "b"};
  run.dtype = DataType::kInt64;
  run.shapes = {{2, 3}, {}};
  run.values = {1, 2, 3};
  Response error;
  error.kind = Response::Kind::kError;
  error.error = "Mismatched shapes";
  error.names = {"c"};
  list.responses = {run, error};
  list.joined = {1, 4};
  list.cacheable = false;
  list.tuning = std::string("\x01\x00settings", 10);
  EXPECT_EQ(decode_response_list(encode_response_list(list)), list);
}

TEST(Message, EveryTruncationIsRejected) {
  std::string bytes = encode_requests({sample_request()});
  for (size_t n = 0; n < bytes.size(); ++n) {
    EXPECT_THROW(decode_requests(std::string_view(bytes).substr(0, n)), InternalError) << n;
  }
  std::string list = encode_response_list({{Response{}}, {2}, true, "tuned"});
  for (size_t n = 0; n < list.size(); ++n) {
    EXPECT_THROW(decode_response_list(std::string_view(list).substr(0, n)), InternalError) << n;
  }
}

TEST(Message, BadEnumsVersionsAndCountsAreNamed) {
  std::string bytes = encode_requests({Request{}});
  std::string bad_op = bytes;
  bad_op[5] = 99;  // version(1) + count(4), then the op byte
  try {
    decode_requests(bad_op);
    FAIL() << "accepted an unknown op";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("unknown op type 99"), std::string::npos) << e.what();
  }
  std::string bad_version = bytes;
  bad_version[0] = 7;
  EXPECT_THROW(decode_requests(bad_version), InternalError);
  // A count of 2^32-1 requests in a few bytes must not allocate them.
  std::string huge = std::string(1, '\x01') + std::string(4, '\xff');
  try {
    decode_requests(huge);
    FAIL() << "accepted a forged count";
  } catch (const InternalError& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds"), std::string::npos) << e.what();
  }
  EXPECT_THROW(decode_requests(bytes + "x"), InternalError);
}

}  // namespace
}  // namespace kolo::core
