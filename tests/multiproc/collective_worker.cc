// A rank for the multi-process tests: runs allreduce of KOLO_TEST_COUNT
// floats KOLO_TEST_ITERATIONS times (0 = until something fails), printing
// "iteration N ok" after each, and on failure prints the error and exits 3.
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "collectives/collectives.h"
#include "common/error.h"
#include "core/config.h"
#include "core/world.h"

int main() {
  using namespace kolo;
  try {
    Config config = Config::FromEnv();
    World world = connect_world(config);
    auto& ctx = *world.context;
    const char* count_env = std::getenv("KOLO_TEST_COUNT");
    const char* iters_env = std::getenv("KOLO_TEST_ITERATIONS");
    size_t count = count_env ? std::strtoull(count_env, nullptr, 10) : (1u << 18);
    long iterations = iters_env ? std::strtol(iters_env, nullptr, 10) : 0;
    std::vector<float> data(count, static_cast<float>(ctx.rank() + 1)), out(count);
    for (long it = 1; iterations == 0 || it <= iterations; ++it) {
      collectives::allreduce(ctx, static_cast<transport::Tag>(it), data.data(), out.data(), count,
                             DataType::kFloat32, {ReduceOp::kSum}, config.collectives);
      float want = ctx.size() * (ctx.size() + 1) / 2.0f;
      if (count > 0 && out[count - 1] != want) {
        fmt::print(stderr, "rank {}: wrong result {} (expected {})\n", ctx.rank(), out[count - 1], want);
        return 4;
      }
      fmt::print("iteration {} ok\n", it);
      std::fflush(stdout);
    }
    return 0;
  } catch (const Error& e) {
    fmt::print(stderr, "collective_worker failed: {}\n", e.status().ToString());
    return 3;
  }
}
