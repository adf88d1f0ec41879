// A connected mesh of `size` ranks (threads in this process) for one test,
// and a way to run one function on every rank at once. One mesh serves all
// cases of a test; each case draws a fresh tag, as the engine does per
// operation, so the cases never see each other's messages.
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "transport/context.h"

namespace kolo::testing {

using transport::Context;
using transport::Tag;

// Runs fn(context) for every rank concurrently, each in its own thread.
// Returns "" if all returned, else one line per rank that threw; a rank that
// throws aborts its context so the others fail fast instead of timing out.
std::string run_on_ranks(std::vector<std::unique_ptr<Context>>& contexts,
                         const std::function<void(Context&)>& fn);

// Builds the mesh the collectives tests run on.
std::vector<std::unique_ptr<Context>> make_test_mesh(int size);

// Parameterised by world size.
class MeshTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override { contexts_ = make_test_mesh(GetParam()); }
  int world_size() const { return GetParam(); }
  Tag next_tag() { return ++last_tag_; }
  // Runs fn on every rank and fails the test (with `what`) if a rank threw.
  void run(const std::string& what, const std::function<void(Context&)>& fn) {
    std::string errors = run_on_ranks(contexts_, fn);
    ASSERT_EQ(errors, "") << what;
  }

 private:
  std::vector<std::unique_ptr<Context>> contexts_;
  Tag last_tag_ = 0;
};

// World sizes 1..8, odd ones included.
inline auto AllWorldSizes() {
  return ::testing::Range(1, 9);
}
// The sizes the large-count cases run on.
inline bool is_large_count_size(int size) {
  return size == 2 || size == 3 || size == 5 || size == 8;
}

}  // namespace kolo::testing
