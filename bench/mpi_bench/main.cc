// mpi-bench: the same sweep and table as kolo-bench, over MPI collectives,
// so Kolo can be compared with Debian's OpenMPI in one run. float32 only.
//
//   mpirun -np 2 --mca btl tcp,self mpi-bench allreduce -b 8 -e 256M -f 4
#include <fmt/format.h>
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cmath>
#include <vector>

#include "common/report.h"
#include "common/settings/value_text.h"

namespace {

using kolo::bench::Collective;

struct Args {
  Collective collective = Collective::kAllreduce;
  size_t min_bytes = 8, max_bytes = 64u << 20;
  double factor = 2;
  int iters = 20, warmup = 5, check = 1;
};

Args parse(int argc, char** argv) {
  Args a;
  CLI::App app{"mpi-bench: MPI collectives in the nccl-tests table shape"};
  std::string collective = "allreduce", min_text = "8", max_text = "64M";
  app.add_option("collective", collective)
      ->check(CLI::IsMember({"allreduce", "allgather", "broadcast", "alltoall", "reducescatter"}));
  app.add_option("-b", min_text);
  app.add_option("-e", max_text);
  app.add_option("-f", a.factor)->check(CLI::Range(1.0001, 1e6));
  app.add_option("-n", a.iters)->check(CLI::Range(1, 1000000));
  app.add_option("-w", a.warmup)->check(CLI::Range(0, 1000000));
  app.add_option("-c", a.check)->check(CLI::Range(0, 1));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    std::exit(app.exit(e) == 0 ? 0 : 2);
  }
  auto lo = kolo::settings::parse_size(min_text), hi = kolo::settings::parse_size(max_text);
  if (!lo || !hi) {
    fmt::print(stderr, "mpi-bench: bad size\n");
    std::exit(2);
  }
  a.min_bytes = *lo;
  a.max_bytes = *hi;
  kolo::bench::parse_collective(collective, &a.collective);
  return a;
}

float input(int rank, size_t i) {
  return static_cast<float>((static_cast<size_t>(rank) * 7 + i) % 4 + 1);
}

struct Case {
  Collective c = Collective::kAllreduce;
  int rank = 0, size = 1;
  size_t count = 0;  // per rank (per block for alltoall)
  size_t total = 0;  // reported elements
  std::vector<float> send, recv;

  void run() {
    int n = static_cast<int>(count);
    switch (c) {
      case Collective::kAllreduce:
        MPI_Allreduce(send.data(), recv.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
      case Collective::kAllgather:
        MPI_Allgather(send.data(), n, MPI_FLOAT, recv.data(), n, MPI_FLOAT, MPI_COMM_WORLD);
        break;
      case Collective::kBroadcast:
        MPI_Bcast(recv.data(), n, MPI_FLOAT, 0, MPI_COMM_WORLD);
        break;
      case Collective::kAlltoall:
        MPI_Alltoall(send.data(), n, MPI_FLOAT, recv.data(), n, MPI_FLOAT, MPI_COMM_WORLD);
        break;
      case Collective::kReduceScatter:
        MPI_Reduce_scatter_block(send.data(), recv.data(), n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
        break;
    }
  }

  double expected(size_t i) const {
    auto reduced = [&](size_t j) {
      double s = 0;
      for (int r = 0; r < size; ++r) s += input(r, j);
      return s;
    };
    switch (c) {
      case Collective::kAllreduce:
        return reduced(i);
      case Collective::kAllgather:
        return input(static_cast<int>(i / count), i % count);
      case Collective::kBroadcast:
        return input(0, i);
      case Collective::kAlltoall:
        return input(static_cast<int>(i / count), rank * count + i % count);
      case Collective::kReduceScatter:
        return reduced(rank * count + i);
    }
    return 0;
  }
};

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  Args args = parse(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (rank == 0) {
    fmt::print("# mpi-bench {}: {} ranks, {} warm-up + {} timed iterations\n",
               kolo::bench::collective_name(args.collective), size, args.warmup, args.iters);
    fmt::print("{}", kolo::bench::header_lines("out-of-place"));
  }
  double busbw_sum = 0;
  int64_t wrong_total = 0;
  auto sizes = kolo::bench::sweep_sizes(args.min_bytes, args.max_bytes, args.factor, 0);
  for (size_t bytes : sizes) {
    Case k;
    k.c = args.collective;
    k.rank = rank;
    k.size = size;
    size_t elems = bytes / sizeof(float);
    bool per_rank =
        args.collective != Collective::kAllreduce && args.collective != Collective::kBroadcast;
    k.count = per_rank ? elems / size : elems;
    k.total = per_rank ? k.count * size : k.count;
    size_t send_n = args.collective == Collective::kAllgather ? k.count : k.total;
    size_t recv_n = args.collective == Collective::kReduceScatter ? k.count : k.total;
    k.send.resize(std::max<size_t>(send_n, 1));
    k.recv.assign(std::max<size_t>(recv_n, 1), 0.0f);
    for (size_t i = 0; i < send_n; ++i) k.send[i] = input(rank, i);
    if (args.collective == Collective::kBroadcast && rank == 0)
      for (size_t i = 0; i < recv_n; ++i) k.recv[i] = input(0, i);

    kolo::bench::ResultRow row;
    row.bytes = k.total * sizeof(float);
    row.count = k.total;
    row.dtype = "float32";
    row.op =
        (args.collective == Collective::kAllreduce || args.collective == Collective::kReduceScatter)
            ? "sum"
            : "none";
    row.root = args.collective == Collective::kBroadcast ? 0 : -1;
    if (args.check) {
      k.run();
      long long wrong = 0;
      for (size_t i = 0; i < recv_n; ++i)
        if (std::abs(k.recv[i] - k.expected(i)) > 1e-5 * std::abs(k.expected(i))) ++wrong;
      MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
      row.wrong = wrong;
      wrong_total += wrong;
    }
    for (int i = 0; i < args.warmup; ++i) k.run();
    MPI_Barrier(MPI_COMM_WORLD);
    double start = MPI_Wtime();
    for (int i = 0; i < args.iters; ++i) k.run();
    double us = (MPI_Wtime() - start) * 1e6 / args.iters;
    MPI_Allreduce(MPI_IN_PLACE, &us, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    row.time_us = us;
    kolo::bench::compute_bandwidth(&row, args.collective, size);
    busbw_sum += row.busbw_gbs;
    if (rank == 0) fmt::print("{}", kolo::bench::format_row(row));
    std::fflush(stdout);
  }
  if (rank == 0)
    fmt::print(
        "{}", kolo::bench::footer_line(busbw_sum / std::max<size_t>(sizes.size(), 1), wrong_total));
  MPI_Finalize();
  return wrong_total == 0 ? 0 : 1;
}
