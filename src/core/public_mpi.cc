// include/kolo/mpi.h over the backend registry's MPI questions.
#include "backends/registry.h"
#include "kolo/mpi.h"

namespace kolo {

bool mpi_available(std::string* why_not) {
  return backends::mpi_available(why_not);
}

int mpi_threads_supported() {
  const std::optional<bool> multiple = backends::mpi_thread_multiple();
  if (!multiple) return -1;
  return *multiple ? 1 : 0;
}

}  // namespace kolo
