#include "common/report.h"

#include <fmt/format.h>

#include <array>

namespace kolo::bench {
namespace {
constexpr std::array<std::string_view, 5> kNames = {"allreduce", "allgather", "broadcast",
                                                    "alltoall", "reducescatter"};
}

std::string_view collective_name(Collective c) {
  return kNames.at(static_cast<size_t>(c));
}

bool parse_collective(std::string_view name, Collective* out) {
  for (size_t i = 0; i < kNames.size(); ++i) {
    if (kNames[i] == name) {
      *out = static_cast<Collective>(i);
      return true;
    }
  }
  if (name == "reduce_scatter") {
    *out = Collective::kReduceScatter;
    return true;
  }
  return false;
}

double bus_factor(Collective c, int nranks) {
  double n = nranks;
  switch (c) {
    case Collective::kAllreduce:
      return nranks > 1 ? 2 * (n - 1) / n : 0;
    case Collective::kAllgather:
    case Collective::kReduceScatter:
    case Collective::kAlltoall:
      return (n - 1) / n;
    case Collective::kBroadcast:
      return 1;
  }
  return 1;
}

std::vector<size_t> sweep_sizes(size_t begin, size_t end, double factor, size_t increment) {
  std::vector<size_t> out;
  for (size_t s = begin; s <= end;) {
    out.push_back(s);
    size_t next =
        increment > 0 ? s + increment : static_cast<size_t>(static_cast<double>(s) * factor);
    if (next <= s) break;  // factor <= 1 would loop forever
    s = next;
  }
  return out;
}

void compute_bandwidth(ResultRow* row, Collective c, int nranks) {
  double seconds = row->time_us * 1e-6;
  row->algbw_gbs = seconds > 0 ? static_cast<double>(row->bytes) / seconds / 1e9 : 0;
  row->busbw_gbs = row->algbw_gbs * bus_factor(c, nranks);
}

std::string header_lines(std::string_view title) {
  return fmt::format(
      "# {}\n"
      "#{:>12} {:>12} {:>9} {:>8} {:>6} {:>10} {:>8} {:>8} {:>7}\n"
      "#{:>12} {:>12} {:>9} {:>8} {:>6} {:>10} {:>8} {:>8} {:>7}\n",
      title, "size", "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "(B)",
      "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "");
}

std::string format_row(const ResultRow& r) {
  std::string wrong = r.wrong < 0 ? "N/A" : std::to_string(r.wrong);
  return fmt::format(" {:>12} {:>12} {:>9} {:>8} {:>6} {:>10.1f} {:>8.3f} {:>8.3f} {:>7}\n",
                     r.bytes, r.count, r.dtype, r.op, r.root, r.time_us, r.algbw_gbs, r.busbw_gbs,
                     wrong);
}

std::string footer_line(double avg_busbw_gbs, int64_t total_wrong) {
  return fmt::format("# Out of bounds values : {} {}\n# Avg bus bandwidth    : {:.4f} GB/s\n",
                     total_wrong, total_wrong == 0 ? "OK" : "FAILED", avg_busbw_gbs);
}

}  // namespace kolo::bench
