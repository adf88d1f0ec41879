// The collectives over a StripedContext: the algorithms pair sends and
// receives of one tag in rounds and chunks, so any slip in how the two
// sides cut a message shows up as a wrong result or an error here. In
// place, with sizes that cross the stripe threshold.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "collectives/collectives.h"
#include "striped_mesh.h"
#include "unit/collectives/reference.h"

namespace kolo::testing {
namespace {

using collectives::AllreduceAlgorithm;
using collectives::CollectiveOptions;
using transport::Context;
using transport::Tag;

class StripedCollectives : public ::testing::TestWithParam<int> {
 protected:
  // Striped from two minimum parts up: ring chunks of 256 KiB and more are cut.
  void SetUp() override {
    mesh_ = make_striped_mesh(GetParam(),
                              striped_options(3, 2 * transport::StripeLayout::kMinPartBytes));
  }
  int n() const { return GetParam(); }
  Tag next_tag() { return ++tag_; }

  // Runs fn on every rank; problems[r] must stay empty.
  void run(const std::string& what, const std::function<void(Context&, std::string&)>& fn) {
    std::vector<std::string> problems(n());
    run_threads(n(), [&](int rank) {
      try {
        fn(*mesh_[rank], problems[rank]);
      } catch (const std::exception& e) {
        problems[rank] = e.what();
        mesh_[rank]->abort(e.what());  // the others fail fast instead of timing out
      }
    });
    for (int r = 0; r < n(); ++r)
      EXPECT_EQ(problems[r], "") << what << " on rank " << r << " of " << n();
  }

 private:
  Contexts mesh_;
  Tag tag_ = 0;
};

TEST_P(StripedCollectives, AllreduceInPlace) {
  struct Algorithm {
    AllreduceAlgorithm algorithm;
    size_t chunk_bytes;
    const char* name;
  };
  const Algorithm algorithms[] = {
      {AllreduceAlgorithm::kRecursiveDoubling, 1 << 20, "recursive_doubling"},
      {AllreduceAlgorithm::kRing, 384 << 10, "ring/384KiB chunks"},
      {AllreduceAlgorithm::kAuto, 1 << 20, "auto"}};
  for (const Algorithm& algorithm : algorithms)
    for (DataType type : {DataType::kFloat32, DataType::kInt64})
      for (size_t count : {size_t{1}, size_t{9999}, size_t{99991}, (size_t{1} << 20) + 3}) {
        const std::string what =
            fmt::format("allreduce {} count={} {}", dtype_name(type), count, algorithm.name);
        std::vector<Bytes> inputs;
        for (int r = 0; r < n(); ++r)
          inputs.push_back(make_input(type, ReduceOp::kSum, count, r, count));
        const Bytes expected = reference_reduce(type, ReduceOp::kSum, inputs);
        CollectiveOptions options;
        options.allreduce_algorithm = algorithm.algorithm;
        options.ring_chunk_bytes = algorithm.chunk_bytes;
        const Tag tag = next_tag();
        run(what, [&](Context& ctx, std::string& problem) {
          Bytes data = inputs[ctx.rank()];
          collectives::allreduce(ctx, tag, data.data(), data.data(), count, type, {}, options);
          problem = compare(type, expected, data);
        });
      }
}

TEST_P(StripedCollectives, AllgatherInPlace) {
  for (size_t count : {size_t{1}, size_t{12345}, size_t{250001}}) {
    std::vector<Bytes> inputs;
    Bytes expected;
    for (int r = 0; r < n(); ++r) {
      inputs.push_back(make_bytes(count * 4, r, count));
      expected.insert(expected.end(), inputs[r].begin(), inputs[r].end());
    }
    const Tag tag = next_tag();
    run(fmt::format("allgather float32 count={}", count), [&](Context& ctx, std::string& problem) {
      Bytes data(expected.size(), 0xcd);
      std::copy(inputs[ctx.rank()].begin(), inputs[ctx.rank()].end(),
                data.begin() + ctx.rank() * count * 4);
      collectives::allgather(ctx, tag, data.data() + ctx.rank() * count * 4, data.data(), count,
                             DataType::kFloat32, {});
      if (data != expected) problem = "wrong result";
    });
  }
}

TEST_P(StripedCollectives, Broadcast) {
  for (size_t count : {size_t{3}, size_t{50001}, size_t{1000003}})
    for (int root : {0, n() - 1}) {
      const Bytes input = make_bytes(count * 4, root, count);
      const Tag tag = next_tag();
      run(fmt::format("broadcast count={} root={}", count, root),
          [&](Context& ctx, std::string& problem) {
            Bytes data = ctx.rank() == root ? input : Bytes(input.size(), 0xcd);
            collectives::broadcast(ctx, tag, data.data(), count, DataType::kFloat32, root, {});
            if (data != input) problem = "wrong result";
          });
    }
}

TEST_P(StripedCollectives, AlltoallInPlace) {
  for (size_t count : {size_t{2}, size_t{100003}}) {
    const size_t block = count * 4;
    std::vector<Bytes> inputs;
    for (int r = 0; r < n(); ++r) inputs.push_back(make_bytes(block * n(), r, count));
    const Tag tag = next_tag();
    run(fmt::format("alltoall int32 count={}", count), [&](Context& ctx, std::string& problem) {
      Bytes data = inputs[ctx.rank()];
      collectives::alltoall(ctx, tag, data.data(), data.data(), count, DataType::kInt32, {});
      for (int j = 0; j < n(); ++j) {
        const auto from = inputs[j].begin() + ctx.rank() * block;
        if (!std::equal(from, from + block, data.begin() + j * block))
          problem += fmt::format(" block {} wrong", j);
      }
    });
  }
}

INSTANTIATE_TEST_SUITE_P(WorldSizes, StripedCollectives, ::testing::Values(2, 3, 4));

}  // namespace
}  // namespace kolo::testing
