// reduce-bench: throughput of the reduction kernels at each SIMD level this
// CPU runs (reduce/simd.h), on Google Benchmark.
//
//   reduce-bench --benchmark_repetitions=5 --benchmark_report_aggregates_only=true
//
// One benchmark per level x dtype (float32, float16, bfloat16 sums) x size
// (1 MiB: two buffers stay in L2/L3; 64 MiB: from memory). GB/s counts the
// bytes of the accumulator per CPU-second (10^9; CPU time, as Google
// Benchmark's rates do, so other processes on the machine count less);
// reduce_into reads them and as many of the input and writes them back, so
// memory traffic is three times that.
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "collectives/reduce/simd.h"
#include "common/half.h"

namespace kolo::bench {
namespace {

using reduce::simd::Kernels;
using reduce::simd::Level;

// Ordinary values of either sign (no subnormals, which would time the
// slow path of the FPU rather than the kernels).
std::vector<uint8_t> values(DataType type, size_t count, int seed) {
  std::vector<uint8_t> data(count * dtype_size(type));
  for (size_t i = 0; i < count; ++i) {
    const int step = static_cast<int>((i * 2654435761u + seed) % 2001) - 1000;
    const float f = static_cast<float>(step) / 256.0f;
    if (type == DataType::kFloat32) {
      std::memcpy(&data[i * 4], &f, 4);
    } else {
      const uint16_t h =
          type == DataType::kFloat16 ? float16::from_float(f).bits : bfloat16::from_float(f).bits;
      std::memcpy(&data[i * 2], &h, 2);
    }
  }
  return data;
}

void reduce_into(benchmark::State& state, const Kernels* kernels, DataType type, size_t bytes) {
  const size_t count = bytes / dtype_size(type);
  std::vector<uint8_t> inout = values(type, count, 1);
  const std::vector<uint8_t> in = values(type, count, 2);
  for (auto _ : state) {
    kernels->reduce_into(inout.data(), in.data(), count, type, ReduceOp::kSum);
    benchmark::DoNotOptimize(inout.data());
    benchmark::ClobberMemory();
  }
  state.counters["GB/s"] =
      benchmark::Counter(static_cast<double>(bytes), benchmark::Counter::kIsIterationInvariantRate);
}

void register_all() {
  for (Level level : reduce::simd::kAllLevels) {
    const Kernels* kernels = reduce::simd::kernels_for(level);
    if (kernels == nullptr) continue;  // this CPU cannot run it
    for (DataType type : {DataType::kFloat32, DataType::kFloat16, DataType::kBFloat16}) {
      for (size_t mib : {size_t{1}, size_t{64}}) {
        const std::string name = fmt::format(
            "reduce_into/{}/{}/{}MiB", reduce::simd::level_name(level), dtype_name(type), mib);
        benchmark::RegisterBenchmark(name.c_str(), reduce_into, kernels, type, mib << 20)
            ->Unit(benchmark::kMicrosecond);
      }
    }
  }
}

}  // namespace
}  // namespace kolo::bench

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  kolo::bench::register_all();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
