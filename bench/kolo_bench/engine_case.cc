#include "kolo_bench/engine_case.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <numeric>
#include <vector>

#include "collectives/collectives.h"
#include "common/error.h"
#include "core/config.h"
#include "core/engine.h"
#include "core/world.h"

namespace kolo::bench {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values.empty() ? 0 : values[values.size() / 2];
}

double micros_since(Clock::time_point start) {
  return std::chrono::duration<double, std::micro>(Clock::now() - start).count();
}

}  // namespace

int run_engine_rank(const BenchArgs& args) {
  Config config = Config::FromEnv();
  core::Engine engine(config);
  // The raw reference gets its own connections under its own keys.
  Config raw_config = config;
  raw_config.rendezvous.prefix += "/raw";
  World raw = connect_world(raw_config);
  int size = config.layout.size, rank = config.layout.rank;

  size_t per_tensor = args.tensor_bytes / sizeof(float);
  size_t total = per_tensor * static_cast<size_t>(args.tensors);
  std::vector<std::vector<float>> grads(static_cast<size_t>(args.tensors),
                                        std::vector<float>(per_tensor));
  std::vector<float> fused(total);
  std::vector<std::string> names;
  for (int t = 0; t < args.tensors; ++t) names.push_back(fmt::format("grad.{}", t));

  // Filling inputs and checking outputs stay outside the timed part.
  auto fill = [&] {
    for (auto& g : grads) std::fill(g.begin(), g.end(), static_cast<float>(rank + 1));
    std::fill(fused.begin(), fused.end(), static_cast<float>(rank + 1));
  };
  auto engine_step = [&] {
    std::vector<core::Handle> handles;
    handles.reserve(grads.size());
    for (size_t t = 0; t < grads.size(); ++t) {
      handles.push_back(engine.allreduce({names[t],
                                          grads[t].data(),
                                          grads[t].data(),
                                          DataType::kFloat32,
                                          {static_cast<int64_t>(per_tensor)},
                                          kCpuDevice},
                                         {ReduceOp::kSum}));
    }
    for (auto& h : handles) {
      if (!h->wait_for(std::chrono::seconds(300)))
        throw TimeoutError("engine step did not finish in 300 s");
      if (!h->status().ok()) throw Error(h->status().code(), h->status().message());
    }
  };
  auto raw_step = [&] {
    raw.backend->allreduce(fused.data(), fused.data(), total, DataType::kFloat32, {ReduceOp::kSum});
  };
  int64_t wrong = 0;
  auto check = [&] {
    if (!args.check) return;
    float want = size * (size + 1) / 2.0f;
    auto bad = [want](float v) { return v != want; };
    for (auto& g : grads) wrong += std::count_if(g.begin(), g.end(), bad);
    wrong += std::count_if(fused.begin(), fused.end(), bad);
  };

  for (int i = 0; i < args.warmup; ++i) {
    fill();
    engine_step();
    raw_step();
    check();
  }
  // Each timed step starts right after a barrier, so both measure the
  // operation rather than how far apart the ranks arrived.
  auto align = [&] { raw.backend->barrier(); };
  std::vector<double> engine_us, raw_us;
  for (int i = 0; i < args.iters; ++i) {
    fill();
    align();
    auto start = Clock::now();
    engine_step();
    engine_us.push_back(micros_since(start));
    align();
    start = Clock::now();
    raw_step();
    raw_us.push_back(micros_since(start));
    check();
  }
  core::CacheStats stats = engine.cache_stats();
  // With KOLO_AUTOTUNE: the settings the timed steps ran with (tuning runs
  // during the warm-up steps; "(tuning)" means -w was too short for it).
  const std::vector<core::AppliedTuning> tunings = engine.applied_tunings();
  engine.shutdown();

  if (rank == 0) {
    double e = median(engine_us), r = median(raw_us);
    double bytes = static_cast<double>(total * sizeof(float));
    double bus = 2.0 * (size - 1) / size;
    fmt::print(
        "# kolo-bench engine: {} ranks, {} tensors x {} B per step ({} B), {} warm-up + {} timed "
        "steps\n",
        size, args.tensors, args.tensor_bytes, total * sizeof(float), args.warmup, args.iters);
    fmt::print("# cycle {} us, fusion threshold {} B, cache hits {} misses {}\n",
               config.engine.cycle_time.count(), config.engine.fusion_threshold_bytes, stats.hits,
               stats.misses);
    fmt::print("{:>28} {:>12} {:>12} {:>10}\n", "", "median(us)", "busbw(GB/s)", "vs raw");
    fmt::print("{:>28} {:>12.1f} {:>12.3f} {:>9.2f}x\n", "engine (many tensors)", e,
               bytes * bus / e / 1e3, e / r);
    fmt::print("{:>28} {:>12.1f} {:>12.3f} {:>9.2f}x\n", "raw allreduce (one buffer)", r,
               bytes * bus / r / 1e3, 1.0);
    if (!tunings.empty())
      fmt::print("# autotune after {} settings: {}\n", tunings.size(),
                 core::autotune::describe(tunings.back().params));
    fmt::print("# engine overhead: {:+.1f}%   #wrong: {}\n", (e / r - 1) * 100, wrong);
    std::fflush(stdout);
  }
  return wrong == 0 ? 0 : 1;
}

}  // namespace kolo::bench
