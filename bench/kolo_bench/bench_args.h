// Command line of kolo-bench, in nccl-tests' shape.
#pragma once

#include <string>
#include <vector>

#include "common/report.h"
#include "kolo/types.h"

namespace kolo::bench {

struct BenchArgs {
  Collective collective = Collective::kAllreduce;
  int np = 0;  // > 0: start this many local ranks and act as their launcher
  size_t min_bytes = 8;
  size_t max_bytes = 64u << 20;
  double factor = 2;
  size_t increment = 0;
  int iters = 20;
  int warmup = 5;
  bool check = true;
  DataType dtype = DataType::kFloat32;
  ReduceOp op = ReduceOp::kSum;
  int root = 0;
  std::string algorithm =
      "auto";                  // allreduce: ring, recursive_doubling; broadcast: tree, pipelined
  double timeout_seconds = 0;  // whole-run limit when launching with -np; 0 = none
  // "engine" mode: steps of `tensors` allreduces of `tensor_bytes` each
  // through the engine, against one raw allreduce of the total.
  bool engine = false;
  int tensors = 200;
  size_t tensor_bytes = 16 * 1024;
};

// Parses argv. On --help prints usage and exits 0; on bad input prints the
// reason and exits 2 (CLI errors must never look like a benchmark failure).
BenchArgs parse_bench_args(int argc, char** argv);

// argv to re-run this benchmark as one rank: everything but -np.
std::vector<std::string> rank_argv(int argc, char** argv);

}  // namespace kolo::bench
