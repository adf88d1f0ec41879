#include "kolo_bench/bench_args.h"

#include <fmt/format.h>

#include <CLI/CLI.hpp>

#include "common/settings/value_text.h"

namespace kolo::bench {
namespace {

// Horovod and MPI users type "-np 4"; CLI11 reads single-dash options as one
// letter, so the two-letter spelling is turned into --np before parsing.
std::vector<std::string> normalized_args(int argc, char** argv) {
  std::vector<std::string> args;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    args.push_back(a == "-np" ? "--np" : a);
  }
  return args;
}

CLI::Validator size_validator() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        auto bytes = settings::parse_size(text);
        if (!bytes) return "'" + text + "' is not a size (e.g. 8, 4K, 256M, 1G)";
        text = std::to_string(*bytes);
        return "";
      },
      "SIZE", "size");
}

}  // namespace

BenchArgs parse_bench_args(int argc, char** argv) {
  BenchArgs a;
  CLI::App app{
      "kolo-bench: collective bandwidth and latency in the shape of nccl-tests.\n"
      "Run under kolorun, or give -np N to start N local ranks itself."};
  std::string collective = "allreduce", dtype = "float32", op = "sum";
  std::string min_text = "8", max_text = "64M";
  int check = 1;
  std::string tensor_bytes_text = "16K";
  app.add_option("collective", collective,
                 "allreduce, allgather, broadcast, alltoall, reducescatter, or engine (many "
                 "small allreduces through the engine against one raw allreduce of their total)")
      ->check(CLI::IsMember({"allreduce", "allgather", "broadcast", "alltoall", "reducescatter",
                             "reduce_scatter", "engine"}));
  app.add_option("--tensors", a.tensors, "engine mode: tensors per step")
      ->check(CLI::Range(1, 100000));
  app.add_option("--tensor-bytes", tensor_bytes_text, "engine mode: bytes per tensor")
      ->transform(size_validator());
  app.add_option("--np", a.np, "start this many local ranks (spelled -np too)")
      ->check(CLI::Range(1, 512));
  app.add_option("-b,--minbytes", min_text, "smallest size")->transform(size_validator());
  app.add_option("-e,--maxbytes", max_text, "largest size")->transform(size_validator());
  app.add_option("-f,--stepfactor", a.factor, "multiply the size by this each step")
      ->check(CLI::Range(1.0001, 1e6));
  app.add_option("-i,--stepbytes", a.increment, "add this many bytes each step instead");
  app.add_option("-n,--iters", a.iters, "timed iterations per size")->check(CLI::Range(1, 1000000));
  app.add_option("-w,--warmup_iters", a.warmup, "untimed iterations first")
      ->check(CLI::Range(0, 1000000));
  app.add_option("-c,--check", check, "check results (1) or not (0)")->check(CLI::Range(0, 1));
  app.add_option("-d,--datatype", dtype,
                 "uint8 int8 int32 int64 float16 bfloat16 float32 float64 bool");
  app.add_option("-o,--op", op, "sum average min max product band bor adasum");
  app.add_option("-r,--root", a.root, "broadcast root")->check(CLI::NonNegativeNumber);
  app.add_option("-a,--algorithm", a.algorithm, "auto, ring, recursive_doubling, tree, pipelined")
      ->check(CLI::IsMember({"auto", "ring", "recursive_doubling", "tree", "pipelined"}));
  app.add_option("-t,--timeout", a.timeout_seconds,
                 "with -np: stop the run after this many seconds")
      ->check(CLI::NonNegativeNumber);

  auto args = normalized_args(argc, argv);
  std::reverse(args.begin(), args.end());  // CLI11 takes the vector reversed
  try {
    app.parse(args);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  auto fail = [](const std::string& message) {
    fmt::print(stderr, "kolo-bench: {}\n", message);
    std::exit(2);
  };
  a.engine = collective == "engine";
  if (!a.engine) parse_collective(collective, &a.collective);
  a.tensor_bytes = *settings::parse_size(tensor_bytes_text);
  if (a.engine && (a.tensor_bytes == 0 || a.tensor_bytes % 4 != 0))
    fail("--tensor-bytes must be a positive multiple of 4 (float32 elements)");
  auto parsed_type = parse_dtype(dtype);
  if (!parsed_type) fail("unknown datatype '" + dtype + "'");
  a.dtype = *parsed_type;
  auto parsed_op = parse_reduce_op(op);
  if (!parsed_op) fail("unknown reduction '" + op + "'");
  a.op = *parsed_op;
  if (!reduce_op_supported(a.op, a.dtype))
    fail(fmt::format("reduction '{}' is not defined for {}", op, dtype));
  if (a.op == ReduceOp::kAdasum && (a.engine || a.collective != Collective::kAllreduce))
    fail("reduction 'adasum' applies to allreduce only");
  // Defaults skip the option's transform, so parse here rather than stoull.
  a.min_bytes = *settings::parse_size(min_text);
  a.max_bytes = *settings::parse_size(max_text);
  if (a.min_bytes > a.max_bytes)
    fail(fmt::format("-b {} is larger than -e {}", min_text, max_text));
  a.check = check == 1;
  return a;
}

std::vector<std::string> rank_argv(int argc, char** argv) {
  std::vector<std::string> out{argv[0]};
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "-np" || a == "--np") {
      ++i;  // skip the value too
      continue;
    }
    if (a.rfind("--np=", 0) == 0) continue;
    out.push_back(a);
  }
  return out;
}

}  // namespace kolo::bench
