// kolo-bench's engine mode: what the engine costs on top of the collective
// it runs. Each step enqueues `tensors` float32 allreduces of `tensor_bytes`
// (a model's gradients, named, as a training loop submits them) and waits
// for all; the reference is one raw allreduce of the same total bytes over
// the same transport. Steps of the two alternate, so machine noise hits
// both alike.
#pragma once

#include "kolo_bench/bench_args.h"

namespace kolo::bench {

// One rank's part; rank 0 prints the table. Returns the exit code.
int run_engine_rank(const BenchArgs& args);

}  // namespace kolo::bench
