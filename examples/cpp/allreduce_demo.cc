// kolo-demo: the smallest real Kolo job. Each rank meets the others through
// the authenticated rendezvous store kolorun hosts, connects (shared memory
// between ranks on one host, TCP between hosts),
// allreduces a gradient-sized vector and checks the result against the
// value it must have.
//
//   kolorun -np 2 build/bin/kolo-demo      (what `make demo` runs)
//   kolorun -np 4 build/bin/kolo-demo
#include <fmt/format.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "common/error.h"
#include "core/config.h"
#include "core/world.h"

namespace {

constexpr size_t kCount = 1u << 20;  // 4 MiB of float32, about one large layer's gradient

int run_rank() {
  using namespace kolo;
  Config config = Config::FromEnv();
  World world = connect_world(config);
  auto& backend = *world.backend;
  const int rank = backend.rank(), size = backend.size();
  if (rank == 0)
    fmt::print("kolo-demo: {} ranks; each contributes (rank+1)*(i%1000) for {} float32 elements\n",
               size, kCount);

  // Rank r contributes (r + 1) * (i % 1000): the sum is size*(size+1)/2 * (i % 1000).
  std::vector<float> gradient(kCount), summed(kCount), averaged(kCount);
  for (size_t i = 0; i < kCount; ++i) gradient[i] = static_cast<float>((rank + 1) * (i % 1000));
  backend.allreduce(gradient.data(), summed.data(), kCount, DataType::kFloat32, {ReduceOp::kSum});
  backend.allreduce(gradient.data(), averaged.data(), kCount, DataType::kFloat32,
                    {ReduceOp::kAverage});

  const double factor = size * (size + 1) / 2.0;
  size_t wrong = 0;
  for (size_t i = 0; i < kCount; ++i) {
    double want = factor * static_cast<double>(i % 1000);
    if (summed[i] != static_cast<float>(want)) ++wrong;
    if (std::abs(averaged[i] - want / size) > 1e-3 * (want / size)) ++wrong;
  }
  fmt::print(
      "rank {}/{}: allreduce over {}: sum[999] = {} (expected {}), average[999] = {} (expected "
      "{}) -> {}\n",
      rank, size, backend.name(), summed[999], factor * 999, averaged[999], factor * 999 / size,
      wrong == 0 ? "CORRECT" : fmt::format("WRONG in {} elements", wrong));
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    fmt::print(stderr,
               "usage: kolorun -np N {}\n(kolo-demo takes no arguments; it is one rank of a job)\n",
               argv[0]);
    return 2;
  }
  try {
    return run_rank();
  } catch (const kolo::Error& e) {
    fmt::print(stderr, "kolo-demo: {}\n", e.status().ToString());
    return e.code() == kolo::StatusCode::kInvalidArgument ? 2 : 1;
  }
}
