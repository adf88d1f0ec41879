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

// fuse_responses over responses the test owns (the engine passes pointers
// into the response cache and the coordinator's list).
std::vector<Response> fuse_responses(const std::vector<Response>& responses,
                                     size_t threshold_bytes) {
  std::vector<const Response*> pointers;
  for (const Response& response : responses) pointers.push_back(&response);
  return core::fuse_responses(pointers, threshold_bytes);
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

TEST(Fusion, FusesResponsesItDoesNotOwnAndLeavesThemIntact) {
  // The engine fuses the responses the cache answered by pointer: each is
  // copied once into its fused response, and the cache's copy stays whole.
  const Response a = allreduce("a", 3), b = allreduce("b", 5), gather = [] {
    Response r = allreduce("g", 2);
    r.op = OpType::kAllgather;
    return r;
  }();
  const std::vector<const Response*> in{&a, &gather, &b};
  auto fused = core::fuse_responses(in, 1 << 20);
  EXPECT_EQ(groups(fused), (std::vector<std::vector<std::string>>{{"a", "b"}, {"g"}}));
  EXPECT_EQ(fused[0].shapes, (std::vector<std::vector<int64_t>>{{3}, {5}}));
  EXPECT_EQ(a.names, std::vector<std::string>{"a"});
  EXPECT_EQ(b.shapes, (std::vector<std::vector<int64_t>>{{5}}));
  EXPECT_EQ(gather.names, std::vector<std::string>{"g"});
}

}  // namespace
}  // namespace kolo::core
