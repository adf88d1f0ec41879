// Fusion planning: compatible allreduces merge up to the threshold,
// everything else passes through in order.
#include "core/fusion.h"

#include <gtest/gtest.h>

namespace kolo::core {
namespace {

Response allreduce(const std::string& name, int64_t floats, DataType dtype = DataType::kFloat32) {
  Response r;
  r.names = {name};
  r.shapes = {{floats}};
  r.dtype = dtype;
  return r;
}

std::vector<std::vector<std::string>> groups(const std::vector<Response>& fused) {
  std::vector<std::vector<std::string>> out;
  for (const auto& r : fused) out.push_back(r.names);
  return out;
}

TEST(Fusion, MergesCompatibleAllreducesUpToTheThreshold) {
  std::vector<Response> in{allreduce("a", 10), allreduce("b", 10), allreduce("c", 10)};
  EXPECT_EQ(groups(fuse_responses(in, 80)),
            (std::vector<std::vector<std::string>>{{"a", "b"}, {"c"}}));
  EXPECT_EQ(groups(fuse_responses(in, 1 << 20)),
            (std::vector<std::vector<std::string>>{{"a", "b", "c"}}));
  auto fused = fuse_responses(in, 1 << 20);
  EXPECT_EQ(fused[0].shapes.size(), 3u);
  EXPECT_EQ(response_bytes(fused[0]), 120u);
}

TEST(Fusion, KeepsIncompatibleApartAndOrderStable) {
  Response other_op = allreduce("max", 4);
  other_op.reduction.op = ReduceOp::kMax;
  Response gather = allreduce("gather", 4);
  gather.op = OpType::kAllgather;
  std::vector<Response> in{allreduce("a", 4),
                           gather,
                           allreduce("i", 4, DataType::kInt32),
                           other_op,
                           allreduce("b", 4),
                           allreduce("j", 4, DataType::kInt32)};
  EXPECT_EQ(groups(fuse_responses(in, 1 << 20)),
            (std::vector<std::vector<std::string>>{{"a", "b"}, {"gather"}, {"i", "j"}, {"max"}}));
}

TEST(Fusion, OversizedTensorRunsAlone) {
  std::vector<Response> in{allreduce("big", 1000), allreduce("small", 1)};
  EXPECT_EQ(groups(fuse_responses(in, 64)),
            (std::vector<std::vector<std::string>>{{"big"}, {"small"}}));
}

}  // namespace
}  // namespace kolo::core
