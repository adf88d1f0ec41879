#include "mpi_binding.h"

#include <pybind11/stl.h>

#include <string>
#include <utility>

#include "kolo/mpi.h"

namespace py = pybind11;

namespace kolo::python {

void bind_mpi(py::module_& m) {
  m.def(
      "mpi_available",
      [] {
        std::string why_not;
        const bool available = kolo::mpi_available(&why_not);
        return std::make_pair(available, why_not);
      },
      "(True, '') when the MPI backend's plugin loads here, else (False, the reason)");
  m.def("mpi_threads_supported", &kolo::mpi_threads_supported,
        "1 with MPI_THREAD_MULTIPLE, 0 with less, -1 while MPI is not initialised");
}

}  // namespace kolo::python
