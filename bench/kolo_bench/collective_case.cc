#include "kolo_bench/collective_case.h"

#include <chrono>
#include <cmath>

#include "collectives/collectives.h"
#include "common/element_io.h"

namespace kolo::bench {
namespace {

using Clock = std::chrono::steady_clock;

double tolerance(DataType dtype, double expected) {
  switch (dtype) {
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return std::abs(expected) * 1e-2;
    case DataType::kFloat32:
      return std::abs(expected) * 1e-5;
    case DataType::kFloat64:
      return std::abs(expected) * 1e-12;
    default:
      return 0;  // integers are exact (reduced_value truncates an average as Kolo does)
  }
}

}  // namespace

CollectiveCase::CollectiveCase(backends::Backend& backend, const BenchArgs& args)
    : backend_(backend), args_(args) {}

CollectiveCase::Shape CollectiveCase::shape_for(size_t bytes) const {
  const size_t elem = dtype_size(args_.dtype);
  const size_t n = static_cast<size_t>(backend_.size());
  Shape s;
  switch (args_.collective) {
    case Collective::kAllreduce:
    case Collective::kBroadcast:
      s.count = bytes / elem;
      s.send_elems = s.recv_elems = s.reported_count = s.count;
      break;
    case Collective::kAllgather:
      // As nccl-tests: the size is the gathered total, each rank sends 1/n.
      s.count = bytes / elem / n;
      s.send_elems = s.count;
      s.recv_elems = s.reported_count = s.count * n;
      break;
    case Collective::kAlltoall:
      s.count = bytes / elem / n;
      s.send_elems = s.recv_elems = s.reported_count = s.count * n;
      break;
    case Collective::kReduceScatter:
      s.count = bytes / elem / n;
      s.send_elems = s.reported_count = s.count * n;
      s.recv_elems = s.count;
      break;
  }
  s.reported_bytes = s.reported_count * elem;
  return s;
}

double CollectiveCase::input_value(int rank, size_t index) const {
  // Small integers, so every reduction is exact in every dtype up to 8+ ranks.
  switch (args_.op) {
    case ReduceOp::kAdasum:
      // Orthogonal across ranks (each element nonzero on one rank only), so
      // Adasum adds them exactly: the result is every rank's element.
      return index % static_cast<size_t>(backend_.size()) == static_cast<size_t>(rank)
                 ? static_cast<double>(index % 4 + 1)
                 : 0.0;
    case ReduceOp::kProduct:
      return (rank + index) % 7 == 0 ? 2 : 1;
    case ReduceOp::kBitAnd:
    case ReduceOp::kBitOr:
      return args_.dtype == DataType::kBool ? ((rank + index) % 3 != 0)
                                            : static_cast<double>(1u << ((rank + index) % 3));
    default:
      return static_cast<double>((static_cast<size_t>(rank) * 7 + index) % 4 + 1);
  }
}

double CollectiveCase::reduced_value(size_t index) const {
  const bool boolean = args_.dtype == DataType::kBool;
  double acc = input_value(0, index);
  for (int r = 1; r < backend_.size(); ++r) {
    double v = input_value(r, index);
    switch (args_.op) {
      case ReduceOp::kSum:
      case ReduceOp::kAverage:
        acc = boolean ? (acc != 0 || v != 0) : acc + v;
        break;
      case ReduceOp::kProduct:
        acc = boolean ? (acc != 0 && v != 0) : acc * v;
        break;
      case ReduceOp::kMin:
        acc = std::min(acc, v);
        break;
      case ReduceOp::kMax:
        acc = std::max(acc, v);
        break;
      case ReduceOp::kBitAnd:
        acc = static_cast<double>(static_cast<int64_t>(acc) & static_cast<int64_t>(v));
        break;
      case ReduceOp::kBitOr:
        acc = static_cast<double>(static_cast<int64_t>(acc) | static_cast<int64_t>(v));
        break;
      case ReduceOp::kAdasum:
        acc += v;  // orthogonal inputs (input_value): Adasum is their sum
        break;
    }
  }
  if (args_.op == ReduceOp::kAverage) {
    // Horovod's rule: the sum times 1/size in double, truncated for integers.
    acc = is_floating(args_.dtype) ? acc / backend_.size()
                                   : std::trunc(acc * (1.0 / backend_.size()));
  }
  return acc;
}

void CollectiveCase::fill_inputs(const Shape& s) {
  const int rank = backend_.rank();
  for (size_t i = 0; i < s.send_elems; ++i)
    store_element(send_.data(), i, args_.dtype, input_value(rank, i));
  for (size_t i = 0; i < s.recv_elems; ++i) store_element(recv_.data(), i, args_.dtype, 0);
  if (args_.collective == Collective::kBroadcast && rank == args_.root)
    for (size_t i = 0; i < s.recv_elems; ++i)
      store_element(recv_.data(), i, args_.dtype, input_value(rank, i));
}

double CollectiveCase::expected(size_t i, const Shape& s) const {
  const int rank = backend_.rank();
  switch (args_.collective) {
    case Collective::kAllreduce:
      return reduced_value(i);
    case Collective::kBroadcast:
      return input_value(args_.root, i);
    case Collective::kAllgather:
      return input_value(static_cast<int>(i / s.count), i % s.count);
    case Collective::kAlltoall:
      return input_value(static_cast<int>(i / s.count),
                         static_cast<size_t>(rank) * s.count + i % s.count);
    case Collective::kReduceScatter:
      return reduced_value(collectives::reduce_scatter_offset(s.send_elems, backend_.size(), rank) +
                           i);
  }
  return 0;
}

int64_t CollectiveCase::count_wrong(const Shape& s) const {
  int64_t wrong = 0;
  std::vector<uint8_t> probe(8);
  for (size_t i = 0; i < s.recv_elems; ++i) {
    // Round the expectation through the dtype, as the real result was.
    store_element(probe.data(), 0, args_.dtype, expected(i, s));
    double want = load_element(probe.data(), 0, args_.dtype);
    double got = load_element(recv_.data(), i, args_.dtype);
    if (!(std::abs(got - want) <= tolerance(args_.dtype, want))) ++wrong;
  }
  return wrong;
}

void CollectiveCase::execute(const Shape& s) {
  const Reduction reduce{args_.op, 1.0, 1.0};
  const std::vector<size_t> counts(static_cast<size_t>(backend_.size()), s.count);
  switch (args_.collective) {
    case Collective::kAllreduce:
      backend_.allreduce(send_.data(), recv_.data(), s.count, args_.dtype, reduce);
      break;
    case Collective::kAllgather:
      backend_.allgatherv(send_.data(), recv_.data(), counts, args_.dtype);
      break;
    case Collective::kBroadcast:
      backend_.broadcast(recv_.data(), s.count, args_.dtype, args_.root);
      break;
    case Collective::kAlltoall:
      backend_.alltoallv(send_.data(), counts, recv_.data(), counts, args_.dtype);
      break;
    case Collective::kReduceScatter:
      backend_.reduce_scatterv(send_.data(), recv_.data(), counts, args_.dtype, reduce);
      break;
  }
}

ResultRow CollectiveCase::run(size_t bytes) {
  const Shape s = shape_for(bytes);
  const size_t elem = dtype_size(args_.dtype);
  send_.resize(std::max<size_t>(s.send_elems * elem, 1));
  recv_.resize(std::max<size_t>(s.recv_elems * elem, 1));

  ResultRow row;
  row.bytes = s.reported_bytes;
  row.count = s.reported_count;
  row.dtype = std::string(dtype_name(args_.dtype));
  bool reduces =
      args_.collective == Collective::kAllreduce || args_.collective == Collective::kReduceScatter;
  row.op = reduces ? std::string(reduce_op_name(args_.op)) : "none";
  row.root = args_.collective == Collective::kBroadcast ? args_.root : -1;

  fill_inputs(s);
  if (args_.check) {
    execute(s);
    int64_t wrong = count_wrong(s);
    backend_.allreduce(&wrong, &wrong, 1, DataType::kInt64, {ReduceOp::kSum});
    row.wrong = wrong;
  }
  for (int i = 0; i < args_.warmup; ++i) execute(s);
  backend_.barrier();
  auto start = Clock::now();
  for (int i = 0; i < args_.iters; ++i) execute(s);
  double us = std::chrono::duration<double, std::micro>(Clock::now() - start).count() / args_.iters;
  // Report the slowest rank, as a collective is only done when all are.
  backend_.allreduce(&us, &us, 1, DataType::kFloat64, {ReduceOp::kMax});
  row.time_us = us;
  compute_bandwidth(&row, args_.collective, backend_.size());
  return row;
}

}  // namespace kolo::bench
