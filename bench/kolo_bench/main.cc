// kolo-bench: nccl-tests-style sweeps of Kolo's collectives over TCP.
//
//   kolo-bench -np 2 allreduce -b 8 -e 256M -f 4 -c 1     (starts 2 local ranks)
//   kolorun -np 4 -H a:2,b:2 kolo-bench allgather          (one rank per process)
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>

#include "common/error.h"
#include "core/config.h"
#include "core/world.h"
#include "kolo_bench/bench_args.h"
#include "kolo_bench/collective_case.h"
#include "kolo_bench/engine_case.h"
#include "runner/launcher.h"

namespace kolo::bench {
namespace {

// --algorithm names an allreduce or a broadcast algorithm; it overrides the
// setting of that operation (as KOLO_ALLREDUCE_ALGORITHM and
// KOLO_BROADCAST_ALGORITHM would).
void force_algorithm(Config& config, const std::string& name) {
  if (name == "ring" || name == "recursive_doubling")
    config.settings.set("KOLO_ALLREDUCE_ALGORITHM", name);
  if (name == "tree" || name == "pipelined") config.settings.set("KOLO_BROADCAST_ALGORITHM", name);
}

int run_launcher(const BenchArgs& args, int argc, char** argv) {
  auto command = rank_argv(argc, argv);
  char self[4096] = {};
  ssize_t n = ::readlink("/proc/self/exe", self, sizeof self - 1);
  if (n > 0)
    command[0] = std::string(self, static_cast<size_t>(n));  // the same binary, wherever it lives
  auto result = runner::launch_local(
      args.np, command,
      std::chrono::milliseconds(static_cast<int64_t>(args.timeout_seconds * 1000)));
  if (!result.message.empty()) fmt::print(stderr, "kolo-bench: {}\n", result.message);
  return result.exit_code == 0 ? 0 : 1;
}

int run_rank(const BenchArgs& args) {
  Config config = Config::FromEnv();
  force_algorithm(config, args.algorithm);
  World world = connect_world(config);
  auto& backend = *world.backend;
  if (args.collective == Collective::kBroadcast && args.root >= backend.size())
    throw InvalidArgument(
        fmt::format("--root {} is not a rank of this {}-rank job", args.root, backend.size()));
  CollectiveCase bench_case(backend, args);
  const bool printer = backend.rank() == 0;
  if (printer) {
    fmt::print(
        "# kolo-bench {}: {} ranks, {} warm-up + {} timed iterations, algorithm {}, transport {}\n",
        collective_name(args.collective), backend.size(), args.warmup, args.iters, args.algorithm,
        backend.name());
    fmt::print("{}", header_lines("out-of-place"));
    std::fflush(stdout);
  }
  double busbw_sum = 0;
  int64_t wrong_total = 0;
  auto sizes = sweep_sizes(args.min_bytes, args.max_bytes, args.factor, args.increment);
  for (size_t bytes : sizes) {
    ResultRow row = bench_case.run(bytes);
    busbw_sum += row.busbw_gbs;
    if (row.wrong > 0) wrong_total += row.wrong;
    if (printer) {
      fmt::print("{}", format_row(row));
      std::fflush(stdout);
    }
  }
  if (printer)
    fmt::print("{}", footer_line(sizes.empty() ? 0 : busbw_sum / sizes.size(), wrong_total));
  return wrong_total == 0 ? 0 : 1;
}

}  // namespace
}  // namespace kolo::bench

int main(int argc, char** argv) {
  using namespace kolo;
  bench::BenchArgs args = bench::parse_bench_args(argc, argv);
  try {
    if (args.np > 0) return bench::run_launcher(args, argc, argv);
    if (args.engine) return bench::run_engine_rank(args);
    return bench::run_rank(args);
  } catch (const Error& e) {
    fmt::print(stderr, "kolo-bench: {}\n", e.status().ToString());
    return e.code() == StatusCode::kInvalidArgument ? 2 : 1;
  } catch (const std::exception& e) {
    fmt::print(stderr, "kolo-bench: {}\n", e.what());
    return 1;
  }
}
