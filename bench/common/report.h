// The nccl-tests table shape shared by kolo-bench and the OpenMPI harness,
// so their outputs can be compared line by line.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace kolo::bench {

enum class Collective { kAllreduce, kAllgather, kBroadcast, kAlltoall, kReduceScatter };

std::string_view collective_name(Collective c);
bool parse_collective(std::string_view name, Collective* out);

// Bus bandwidth factor of nccl-tests: what each rank's link must carry
// relative to the algorithm bandwidth (size / time).
double bus_factor(Collective c, int nranks);

// The sizes of a sweep: begin, begin*factor, ... up to end (inclusive), or
// begin, begin+increment, ... when increment > 0.
std::vector<size_t> sweep_sizes(size_t begin, size_t end, double factor, size_t increment);

struct ResultRow {
  size_t bytes = 0;
  size_t count = 0;
  std::string dtype;
  std::string op;  // "-" when the collective has none
  int root = -1;
  double time_us = 0;
  double algbw_gbs = 0;
  double busbw_gbs = 0;
  int64_t wrong = -1;  // -1: not checked
};

std::string header_lines(std::string_view title);
std::string format_row(const ResultRow& row);
std::string footer_line(double avg_busbw_gbs, int64_t total_wrong);

// Fills algbw/busbw from bytes and time.
void compute_bandwidth(ResultRow* row, Collective c, int nranks);

}  // namespace kolo::bench
