// kolo-demo: the smallest real Kolo job. Starts two processes on this host,
// which meet in an authenticated rendezvous store, connect over TCP and
// allreduce a gradient-sized vector; each checks the result against the
// value it must have and says so.
//
//   kolo-demo            (launches 2 ranks of itself)
//   kolo-demo --np 4     (or any other count)
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "collectives/collectives.h"
#include "common/error.h"
#include "core/config.h"
#include "core/world.h"
#include "runner/local_launcher.h"

namespace {

constexpr size_t kCount = 1u << 20;  // 4 MiB of float32, about one large layer's gradient

int run_rank() {
  using namespace kolo;
  Config config = Config::FromEnv();
  World world = connect_world(config);
  auto& ctx = *world.context;
  const int rank = ctx.rank(), size = ctx.size();

  // Rank r contributes (r + 1) * (i % 1000): the sum is size*(size+1)/2 * (i % 1000).
  std::vector<float> gradient(kCount), summed(kCount), averaged(kCount);
  for (size_t i = 0; i < kCount; ++i) gradient[i] = static_cast<float>((rank + 1) * (i % 1000));
  collectives::allreduce(ctx, 1, gradient.data(), summed.data(), kCount, DataType::kFloat32,
                         {ReduceOp::kSum}, config.collectives);
  collectives::allreduce(ctx, 2, gradient.data(), averaged.data(), kCount, DataType::kFloat32,
                         {ReduceOp::kAverage}, config.collectives);

  const double factor = size * (size + 1) / 2.0;
  size_t wrong = 0;
  for (size_t i = 0; i < kCount; ++i) {
    double want = factor * static_cast<double>(i % 1000);
    if (summed[i] != static_cast<float>(want)) ++wrong;
    if (std::abs(averaged[i] - want / size) > 1e-3 * (want / size)) ++wrong;
  }
  fmt::print(
      "[rank {}/{}] allreduce of {} float32 over TCP: sum[999] = {} (expected {}), "
      "average[999] = {} (expected {}) -> {}\n",
      rank, size, kCount, summed[999], factor * 999, averaged[999], factor * 999 / size,
      wrong == 0 ? "CORRECT" : fmt::format("WRONG in {} elements", wrong));
  return wrong == 0 ? 0 : 1;
}

int launch(int np) {
  char self[4096] = {};
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) throw kolo::IoError("cannot find this program's path in /proc/self/exe");
  kolo::runner::LocalLaunchOptions options;
  options.np = np;
  options.argv = {std::string(self, static_cast<size_t>(n))};
  options.job_timeout = std::chrono::seconds(120);
  fmt::print("kolo-demo: starting {} ranks on localhost; each contributes (rank+1)*(i%1000) for "
             "{} elements\n", np, kCount);
  std::fflush(stdout);
  auto result = kolo::runner::launch_local(options);
  if (result.exit_code() != 0) {
    if (result.first_failure >= 0)
      fmt::print(stderr, "kolo-demo: FAILED: {}\n", result.ranks[result.first_failure].describe());
    if (result.timed_out) fmt::print(stderr, "kolo-demo: FAILED: the job did not finish in 120 s\n");
    return 1;
  }
  fmt::print("kolo-demo: all {} ranks finished and verified the allreduce result: OK\n", np);
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    if (std::getenv("KOLO_RANK") != nullptr) return run_rank();
    int np = 2;
    for (int i = 1; i < argc; ++i) {
      std::string a = argv[i];
      if ((a == "-np" || a == "--np") && i + 1 < argc) {
        np = std::atoi(argv[++i]);
      } else {
        fmt::print(stderr, "usage: kolo-demo [--np N]\n");
        return 2;
      }
    }
    if (np < 1 || np > 64) {
      fmt::print(stderr, "kolo-demo: --np must be between 1 and 64\n");
      return 2;
    }
    return launch(np);
  } catch (const kolo::Error& e) {
    fmt::print(stderr, "kolo-demo: {}\n", e.status().ToString());
    return 1;
  }
}
