#include "core/message.h"

#include "common/byte_codec.h"
#include "common/error.h"
#include "core/operation_table.h"

namespace kolo::core {
namespace {

using codec::Reader;
using codec::Writer;

// Bumped whenever the layout below changes, so ranks built from different
// sources fail loudly instead of misreading each other.
constexpr uint8_t kRequestsVersion = 1;
constexpr uint8_t kResponsesVersion = 3;  // 2: no stall shutdown text; 3: autotune settings

void put_ints(Writer& out, const std::vector<int64_t>& values) {
  out.u32(static_cast<uint32_t>(values.size()));
  for (int64_t v : values) out.i64(v);
}

std::vector<int64_t> get_ints(Reader& in, const char* what) {
  std::vector<int64_t> values(in.count(what, 8));
  for (auto& v : values) v = in.i64();
  return values;
}

template <typename Enum>
Enum get_enum(Reader& in, int limit, const char* what) {
  uint8_t v = in.u8();
  if (in.ok() && v >= limit) in.fail(std::string("unknown ") + what + " " + std::to_string(v));
  return static_cast<Enum>(v);
}

std::string_view as_view(const codec::Bytes& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

std::span<const uint8_t> as_span(std::string_view bytes) {
  return {reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()};
}

void finish(Reader& in, const char* what) {
  in.expect_end();
  if (!in.ok()) throw InternalError(std::string("malformed ") + what + ": " + in.error());
}

void put_request(Writer& out, const Request& r) {
  out.u8(static_cast<uint8_t>(r.op));
  out.blob(r.name);
  out.u32(static_cast<uint32_t>(r.rank));
  out.u8(static_cast<uint8_t>(r.dtype));
  out.u8(static_cast<uint8_t>(r.reduction.op));
  out.f64(r.reduction.prescale);
  out.f64(r.reduction.postscale);
  out.u32(static_cast<uint32_t>(r.root));
  out.u32(static_cast<uint32_t>(r.device));
  put_ints(out, r.shape);
  put_ints(out, r.values);
  out.blob(r.group);
  out.u32(static_cast<uint32_t>(r.group_size));
  out.i64(r.age_us);
}

Request get_request(Reader& in) {
  Request r;
  r.op = get_enum<OpType>(in, kNumOpTypes, "op type");
  r.name = in.text("name");
  r.rank = static_cast<int32_t>(in.u32());
  r.dtype = get_enum<DataType>(in, kNumDataTypes, "dtype");
  r.reduction.op = get_enum<ReduceOp>(in, kNumReduceOps, "reduce op");
  r.reduction.prescale = in.f64();
  r.reduction.postscale = in.f64();
  r.root = static_cast<int32_t>(in.u32());
  r.device = static_cast<int32_t>(in.u32());
  r.shape = get_ints(in, "shape");
  r.values = get_ints(in, "values");
  r.group = in.text("group");
  r.group_size = static_cast<int32_t>(in.u32());
  r.age_us = in.i64();
  return r;
}

void put_response(Writer& out, const Response& r) {
  out.u8(static_cast<uint8_t>(r.kind));
  out.u8(static_cast<uint8_t>(r.op));
  out.u32(static_cast<uint32_t>(r.names.size()));
  for (const auto& name : r.names) out.blob(name);
  out.blob(r.error);
  out.u8(static_cast<uint8_t>(r.dtype));
  out.u8(static_cast<uint8_t>(r.reduction.op));
  out.f64(r.reduction.prescale);
  out.f64(r.reduction.postscale);
  out.u32(static_cast<uint32_t>(r.root));
  out.u32(static_cast<uint32_t>(r.device));
  out.u32(static_cast<uint32_t>(r.shapes.size()));
  for (const auto& shape : r.shapes) put_ints(out, shape);
  put_ints(out, r.values);
}

Response get_response(Reader& in) {
  Response r;
  r.kind = get_enum<Response::Kind>(in, 2, "response kind");
  r.op = get_enum<OpType>(in, kNumOpTypes, "op type");
  r.names.resize(in.count("names", 4));
  for (auto& name : r.names) name = in.text("name");
  r.error = in.text("error");
  r.dtype = get_enum<DataType>(in, kNumDataTypes, "dtype");
  r.reduction.op = get_enum<ReduceOp>(in, kNumReduceOps, "reduce op");
  r.reduction.prescale = in.f64();
  r.reduction.postscale = in.f64();
  r.root = static_cast<int32_t>(in.u32());
  r.device = static_cast<int32_t>(in.u32());
  r.shapes.resize(in.count("shapes", 4));
  for (auto& shape : r.shapes) shape = get_ints(in, "shape");
  r.values = get_ints(in, "values");
  return r;
}

void check_version(Reader& in, uint8_t expected, const char* what) {
  uint8_t version = in.u8();
  if (in.ok() && version != expected) {
    in.fail(std::string(what) + " format version " + std::to_string(version) + ", expected " +
            std::to_string(expected) + " (ranks run different Kolo builds?)");
  }
}

}  // namespace

std::string_view op_type_name(OpType op) {
  if (static_cast<size_t>(op) >= kOperations.size()) return "unknown";
  return operation_info(op).name;
}

std::string encode_requests(const std::vector<Request>& requests) {
  Writer out;
  out.u8(kRequestsVersion);
  out.u32(static_cast<uint32_t>(requests.size()));
  for (const auto& r : requests) put_request(out, r);
  return std::string(as_view(out.take()));
}

std::vector<Request> decode_requests(std::string_view bytes) {
  Reader in(as_span(bytes));
  check_version(in, kRequestsVersion, "request list");
  std::vector<Request> requests(in.count("requests", 16));
  for (auto& r : requests) r = get_request(in);
  finish(in, "request list");
  return requests;
}

std::string encode_response_list(const ResponseList& list) {
  Writer out;
  out.u8(kResponsesVersion);
  out.u32(static_cast<uint32_t>(list.responses.size()));
  for (const auto& r : list.responses) put_response(out, r);
  out.u32(static_cast<uint32_t>(list.joined.size()));
  for (int32_t rank : list.joined) out.u32(static_cast<uint32_t>(rank));
  out.u8(list.cacheable ? 1 : 0);
  out.blob(list.tuning);
  return std::string(as_view(out.take()));
}

ResponseList decode_response_list(std::string_view bytes) {
  Reader in(as_span(bytes));
  check_version(in, kResponsesVersion, "response list");
  ResponseList list;
  list.responses.resize(in.count("responses", 16));
  for (auto& r : list.responses) r = get_response(in);
  list.joined.resize(in.count("joined ranks", 4));
  for (auto& rank : list.joined) rank = static_cast<int32_t>(in.u32());
  list.cacheable = in.boolean("cacheable");
  list.tuning = std::string(as_view(in.blob("tuning")));
  finish(in, "response list");
  return list;
}

}  // namespace kolo::core
