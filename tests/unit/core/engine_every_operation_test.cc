// Every operation of the operation table through the engine, 2 ranks as
// threads: an operation whose case is missing in the executor or the engine
// fails here, because the loop below takes its list from the table. Results
// are checked only as far as needed to see the operation ran; the detailed
// cases are in engine_ops_test.cc and engine_join_sets_test.cc.
#include <gtest/gtest.h>

#include <cstring>
#include <string>

#include "core/operation_table.h"
#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using testing::run_engines;
using testing::wait_for;

constexpr int kRanks = 2;
constexpr int64_t kElements = 4;

// Runs `op` once on this rank and checks its result. No default: a new
// OpType without its case here does not compile (-Wswitch, -Werror).
void run_and_check(Engine& engine, int rank, OpType op, int32_t& added_set) {
  const std::string name = std::string(op_type_name(op)) + ".every";
  std::vector<float> in(kElements, static_cast<float>(rank + 1));
  std::vector<float> out(kElements, -1.0f);
  TensorArgs tensor{name, in.data(), out.data(), DataType::kFloat32, {kElements}, kCpuDevice};
  Handle handle;
  switch (op) {
    case OpType::kAllreduce:
      handle = engine.allreduce(tensor, {ReduceOp::kSum});
      break;
    case OpType::kAllgather:
      handle = engine.allgather(tensor);
      break;
    case OpType::kBroadcast:
      handle = engine.broadcast(tensor, 1);
      break;
    case OpType::kAlltoall:
      handle = engine.alltoall(tensor, {});
      break;
    case OpType::kReducescatter:
      handle = engine.reducescatter(tensor, {ReduceOp::kSum});
      break;
    case OpType::kBarrier:
      handle = engine.barrier();
      break;
    case OpType::kJoin:
      handle = engine.join();
      break;
    case OpType::kAddProcessSet:
      handle = engine.add_process_set({0, 1});
      break;
    case OpType::kRemoveProcessSet:
      handle = engine.remove_process_set(added_set);
      break;
  }
  ASSERT_TRUE(handle);
  Status status = wait_for(handle);
  ASSERT_TRUE(status.ok()) << name << ": " << status.ToString();

  const auto& result = handle->result();
  if (op == OpType::kAddProcessSet) added_set = static_cast<int32_t>(result.value);
  std::vector<float> engine_output(result.data.size() / sizeof(float));
  if (!result.data.empty())
    std::memcpy(engine_output.data(), result.data.data(), result.data.size());
  switch (operation_info(op).output) {
    case OutputBuffer::kCaller: {
      // allreduce: 1 + 2; broadcast: rank 1's 2.
      float expected = operation_info(op).reduces ? 3.0f : 2.0f;
      EXPECT_EQ(out, std::vector<float>(kElements, expected)) << name;
      break;
    }
    case OutputBuffer::kEngine: {
      if (operation_info(op).reduces) {  // reducescatter: half the rows each, summed
        EXPECT_EQ(engine_output, std::vector<float>(kElements / kRanks, 3.0f)) << name;
      } else if (op == OpType::kAllgather) {
        std::vector<float> expected(kElements, 1.0f);
        expected.insert(expected.end(), kElements, 2.0f);
        EXPECT_EQ(engine_output, expected) << name;
      } else {  // alltoall: half of every rank's rows
        std::vector<float> expected(kElements / kRanks, 1.0f);
        expected.insert(expected.end(), kElements / kRanks, 2.0f);
        EXPECT_EQ(engine_output, expected) << name;
      }
      break;
    }
    case OutputBuffer::kNone:
      EXPECT_EQ(out, std::vector<float>(kElements, -1.0f)) << name;
      break;
  }
}

TEST(EngineEveryOperation, RunsEachOperationOfTheTable) {
  run_engines(kRanks, [](Engine& engine, int rank) {
    // Add comes before remove in the table, so remove finds the set added.
    int32_t added_set = -1;
    for (const auto& operation : kOperations) run_and_check(engine, rank, operation.op, added_set);
  });
}

}  // namespace
}  // namespace kolo::core
