// Runs one collective at one size: fills inputs with a pattern whose result
// is exactly known, checks the output (#wrong), then times iterations.
#pragma once

#include <cstdint>
#include <vector>

#include "backends/backend.h"
#include "common/report.h"
#include "kolo_bench/bench_args.h"

namespace kolo::bench {

class CollectiveCase {
 public:
  CollectiveCase(backends::Backend& backend, const BenchArgs& args);

  // Every rank calls this with the same size; every rank gets the same row
  // (times are the slowest rank's, #wrong the sum over ranks).
  ResultRow run(size_t bytes);

 private:
  struct Shape {
    size_t count = 0;       // elements each rank sends (per destination for alltoall)
    size_t send_elems = 0;  // elements in the send buffer
    size_t recv_elems = 0;  // elements in the receive buffer
    size_t reported_bytes = 0;
    size_t reported_count = 0;
  };
  Shape shape_for(size_t bytes) const;
  void execute(const Shape& shape);
  void fill_inputs(const Shape& shape);
  int64_t count_wrong(const Shape& shape) const;
  double expected(size_t index, const Shape& shape) const;
  double input_value(int rank, size_t index) const;
  double reduced_value(size_t index) const;  // the op over every rank's input_value

  backends::Backend& backend_;
  BenchArgs args_;
  std::vector<uint8_t> send_, recv_;
};

}  // namespace kolo::bench
