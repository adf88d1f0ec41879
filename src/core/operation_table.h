// The one description of every operation the engine negotiates: what it
// needs from the caller, what must agree across ranks, whether it fuses, is
// cached or runs on a rank that has joined. Validation, the coordinator,
// fusion, the response cache, the executor and the bindings read these
// properties here instead of each testing operation kinds of their own, so a
// new operation is one entry here plus the code that really differs (its
// executor function, its API entry points). The table is in OpType order,
// checked when the file compiles.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "core/message.h"

namespace kolo::core {

// Who provides the memory the result is written to.
enum class OutputBuffer : uint8_t {
  kNone,    // a control operation: no tensor result
  kCaller,  // the caller passes an output of the input's size (or the input itself)
  kEngine,  // the size is known after negotiation, so the engine allocates it
};

// What the operation needs of the tensor's first dimension.
enum class FirstDimension : uint8_t {
  kAny,            // any shape, a scalar too; the whole shape must agree across ranks
  kRequired,       // split along it; the whole shape must agree across ranks
  kVariesPerRank,  // gathered or split along it; only the other dimensions must agree
};

// Each property's default is the control operation's (barrier), so an
// entry names only what its operation does.
struct OperationInfo {
  OpType op;
  std::string_view name;      // "allreduce": messages, Python's names (op_type_name)
  std::string_view activity;  // "ALLREDUCE": its timeline row while it runs
  bool moves_data = false;    // has a tensor to send; false for control operations
  bool reduces = false;       // takes a Reduction, which must agree across ranks
  OutputBuffer output = OutputBuffer::kNone;
  FirstDimension first_dimension = FirstDimension::kAny;
  bool fusable = false;               // responses of the same kind may share one buffer
  bool cacheable = false;             // the response cache may stand in for negotiation
  bool runs_on_joined_rank = false;   // a joined rank takes part, contributing zeros
  bool has_root = false;              // one rank's data goes to all; the root must agree
  bool changes_process_sets = false;  // its values (the set) must agree; the engine runs it
};

inline constexpr std::array<OperationInfo, kNumOpTypes> kOperations = {{
    {.op = OpType::kAllreduce,
     .name = "allreduce",
     .activity = "ALLREDUCE",
     .moves_data = true,
     .reduces = true,
     .output = OutputBuffer::kCaller,
     .fusable = true,
     .cacheable = true,
     .runs_on_joined_rank = true},
    {.op = OpType::kAllgather,
     .name = "allgather",
     .activity = "ALLGATHER",
     .moves_data = true,
     .output = OutputBuffer::kEngine,
     .first_dimension = FirstDimension::kVariesPerRank,
     .cacheable = true},
    {.op = OpType::kBroadcast,
     .name = "broadcast",
     .activity = "BROADCAST",
     .moves_data = true,
     .output = OutputBuffer::kCaller,
     .cacheable = true,
     .has_root = true},
    {.op = OpType::kAlltoall,
     .name = "alltoall",
     .activity = "ALLTOALL",
     .moves_data = true,
     .output = OutputBuffer::kEngine,
     .first_dimension = FirstDimension::kVariesPerRank,
     .cacheable = true},
    {.op = OpType::kReducescatter,
     .name = "reducescatter",
     .activity = "REDUCESCATTER",
     .moves_data = true,
     .reduces = true,
     .output = OutputBuffer::kEngine,
     .first_dimension = FirstDimension::kRequired,
     .cacheable = true},
    {.op = OpType::kBarrier, .name = "barrier", .activity = "BARRIER"},
    // Join is never negotiated as a tensor: the coordinator counts joined
    // ranks and answers with one join response when all have joined.
    {.op = OpType::kJoin, .name = "join", .activity = "JOIN", .runs_on_joined_rank = true},
    {.op = OpType::kAddProcessSet,
     .name = "add_process_set",
     .activity = "ADD_PROCESS_SET",
     .changes_process_sets = true},
    {.op = OpType::kRemoveProcessSet,
     .name = "remove_process_set",
     .activity = "REMOVE_PROCESS_SET",
     .changes_process_sets = true},
}};

// Each OpType has its entry at its own number (an entry left out leaves a
// zero-filled one behind, whose op is wrong).
constexpr bool operations_in_op_type_order() {
  for (size_t i = 0; i < kOperations.size(); ++i) {
    if (static_cast<size_t>(kOperations[i].op) != i || kOperations[i].name.empty()) return false;
  }
  return true;
}
static_assert(operations_in_op_type_order(), "kOperations needs one entry per OpType, in order");

// `op` must be a valid OpType (the codec refuses others).
constexpr const OperationInfo& operation_info(OpType op) {
  return kOperations[static_cast<size_t>(op)];
}

}  // namespace kolo::core
