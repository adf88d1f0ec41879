// A rank for the multi-process tests: runs allreduce of KOLO_TEST_COUNT
// floats KOLO_TEST_ITERATIONS times (0 = until something fails), printing
// "iteration N ok" after each, and on failure prints the error and exits 3.
// With KOLO_TEST_MODE=engine the allreduces go through the engine as two
// named tensors per step (as a training loop's gradients would); after a
// failure it checks that a later operation fails at once with the same
// root cause.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/error.h"
#include "core/config.h"
#include "core/engine.h"
#include "core/world.h"

namespace {

using namespace kolo;

int run_engine(const Config& config, size_t count, long iterations) {
  core::Engine engine(config);
  int rank = config.layout.rank, size = config.layout.size;
  std::vector<float> a(count, static_cast<float>(rank + 1)), b(count / 2 + 1, 1.0f);
  auto tensor = [](const char* name, std::vector<float>& buf) {
    return core::TensorArgs{
        name,      buf.data(), buf.data(), DataType::kFloat32, {static_cast<int64_t>(buf.size())},
        kCpuDevice};
  };
  for (long it = 1; iterations == 0 || it <= iterations; ++it) {
    std::fill(a.begin(), a.end(), static_cast<float>(rank + 1));
    auto ha = engine.allreduce(tensor("grad.fc1.weight", a), {ReduceOp::kSum});
    auto hb = engine.allreduce(tensor("grad.fc1.bias", b), {ReduceOp::kAverage});
    for (const auto& h : {ha, hb}) {
      if (!h->wait_for(std::chrono::seconds(120))) {
        fmt::print(stderr, "engine worker: handle not done after 120 s\n");
        return 5;
      }
      Status status = h->status();
      if (status.ok()) continue;
      fmt::print(stderr, "engine worker failed: {}\n", status.ToString());
      auto later = engine.allreduce(tensor("later", b), {ReduceOp::kSum});
      if (later->wait_for(std::chrono::seconds(5)) &&
          later->status().message() == status.message()) {
        fmt::print(stderr, "later operation failed with the same root cause\n");
      }
      return 3;
    }
    float want = size * (size + 1) / 2.0f;
    if (count > 0 && a[count - 1] != want) {
      fmt::print(stderr, "rank {}: wrong result {} (expected {})\n", rank, a[count - 1], want);
      return 4;
    }
    fmt::print("iteration {} ok\n", it);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main() {
  using namespace kolo;
  // Tests that stop or kill one rank under kolorun find it by this line.
  fmt::print("pid {}\n", ::getpid());
  std::fflush(stdout);
  try {
    Config config = Config::FromEnv();
    const char* count_env = std::getenv("KOLO_TEST_COUNT");
    const char* iters_env = std::getenv("KOLO_TEST_ITERATIONS");
    size_t count = count_env ? std::strtoull(count_env, nullptr, 10) : (1u << 18);
    long iterations = iters_env ? std::strtol(iters_env, nullptr, 10) : 0;
    const char* mode = std::getenv("KOLO_TEST_MODE");
    if (mode != nullptr && std::string(mode) == "engine")
      return run_engine(config, count, iterations);
    // The backend the engine uses: shared memory between these local ranks.
    World world = connect_world(config);
    auto& backend = *world.backend;
    std::vector<float> data(count, static_cast<float>(backend.rank() + 1)), out(count);
    for (long it = 1; iterations == 0 || it <= iterations; ++it) {
      backend.allreduce(data.data(), out.data(), count, DataType::kFloat32, {ReduceOp::kSum});
      float want = backend.size() * (backend.size() + 1) / 2.0f;
      if (count > 0 && out[count - 1] != want) {
        fmt::print(stderr, "rank {}: wrong result {} (expected {})\n", backend.rank(),
                   out[count - 1], want);
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
