// kolo._core's MPI questions (include/kolo/mpi.h): whether the MPI plugin
// loads here and what MPI gives threads, for Horovod's mpi_built() and
// mpi_threads_supported().
#pragma once

#include <pybind11/pybind11.h>

namespace kolo::python {

void bind_mpi(pybind11::module_& m);

}  // namespace kolo::python
