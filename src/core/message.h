// The values the controller negotiates with (after Horovod's message.h):
// a Request says "this rank is ready to run this operation on this tensor";
// a Response says "every rank is ready: run it" (or "it cannot run: here is
// why, on every rank"). Plain values, with a binary codec for the wire.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "kolo/types.h"

namespace kolo::core {

// Numeric values are part of the wire format; append only.
enum class OpType : uint8_t {
  kAllreduce = 0,
  kAllgather = 1,
  kBroadcast = 2,
  kAlltoall = 3,
  kReducescatter = 4,
  kBarrier = 5,
  kJoin = 6,
  kAddProcessSet = 7,
  kRemoveProcessSet = 8,
};
inline constexpr int kNumOpTypes = 9;
std::string_view op_type_name(OpType op);  // "allreduce", ...

struct Request {
  OpType op = OpType::kAllreduce;
  std::string name;
  int32_t rank = 0;  // within the process set
  DataType dtype = DataType::kFloat32;
  Reduction reduction;  // allreduce, reducescatter
  int32_t root = 0;     // broadcast
  int32_t device = kCpuDevice;
  std::vector<int64_t> shape;
  // Alltoall: rows of the first dimension sent to each rank. Process set
  // add: the ranks of the new set. Remove: the set's id.
  std::vector<int64_t> values;
  // Grouped operations: the first name of the group and its size; a group is
  // negotiated and run as a unit. Empty for ungrouped tensors.
  std::string group;
  int32_t group_size = 0;
  // How long the request has waited on its rank, in microseconds, so the
  // coordinator's stall inspector measures from the submitter's clock.
  int64_t age_us = 0;

  bool operator==(const Request&) const = default;
};

// What a cycle of one process set decided, in the order every rank runs it.
struct Response {
  enum class Kind : uint8_t { kRun = 0, kError = 1 };
  Kind kind = Kind::kRun;
  OpType op = OpType::kAllreduce;
  std::vector<std::string> names;  // several when fused or grouped
  std::string error;               // kError: the text every rank reports
  DataType dtype = DataType::kFloat32;
  Reduction reduction;
  int32_t root = 0;
  int32_t device = kCpuDevice;
  // Per tensor (in `names` order): its shape as submitted (the first rank's
  // for allgather/alltoall, whose first dimension varies).
  std::vector<std::vector<int64_t>> shapes;
  // Allgather: first-dimension size of every rank, per tensor (tensor-major).
  // Join: the last rank to join. Process set add: the ranks of the set.
  // Remove: the set's id. Error refusing an operation while ranks have
  // joined: those ranks (their join() fails with the error).
  std::vector<int64_t> values;

  bool operator==(const Response&) const = default;
};

// What the coordinator tells every rank after a full negotiation.
struct ResponseList {
  std::vector<Response> responses;
  // Ranks of the set that have joined and not yet been released.
  std::vector<int32_t> joined;
  // False when ranks had joined while these responses were decided: a
  // joined rank has no request for them, so no rank caches them (the caches
  // must stay identical).
  bool cacheable = true;
  // The autotuner's settings (core/autotune/tuned_params.h) that every rank
  // applies after running these responses; empty when they do not change.
  std::string tuning;

  bool operator==(const ResponseList&) const = default;
};

std::string encode_requests(const std::vector<Request>& requests);
std::vector<Request> decode_requests(std::string_view bytes);
std::string encode_response_list(const ResponseList& list);
ResponseList decode_response_list(std::string_view bytes);

}  // namespace kolo::core
