// The OpenMPI counterpart of kolo_first_collective.cc: MPI_Init, one
// MPI_Allreduce of one float, rank 0 prints the time since LAUNCH_START_NS.
#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  float in = 1, out = 0;
  MPI_Allreduce(&in, &out, 1, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const char* start = std::getenv("LAUNCH_START_NS");
  if (rank == 0 && start != nullptr)
    std::printf("first_collective_ms %.1f sum %g\n", (now - std::stoll(start)) / 1e6, out);
  MPI_Finalize();
  return out == static_cast<float>(size) ? 0 : 1;
}
