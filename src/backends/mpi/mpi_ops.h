// MPI datatypes and reduction ops for Kolo's dtypes and reductions (plugin
// side). Built-in MPI ops serve the integer and float32/float64 reductions;
// float16, bfloat16 and bool, which MPI has no arithmetic for, get
// user-defined ops that call Kolo's own kernels (collectives/reduce), so they
// accumulate in float32 and round once per combination exactly as the host
// backend does.
#pragma once

#include <mpi.h>

#include <array>

#include "kolo/types.h"

namespace kolo::backends::mpi {

// The dtypes reduced by user-defined ops (mpi_ops.cc lists them).
inline constexpr size_t kUserTypeCount = 6;

class MpiOps {
 public:
  // Creates the user-defined ops (MPI_Op_create is local: no communication).
  MpiOps();
  ~MpiOps();
  MpiOps(const MpiOps&) = delete;
  MpiOps& operator=(const MpiOps&) = delete;

  // The MPI type one element of `dtype` travels as (2-byte floats as
  // MPI_UINT16_T, bool as MPI_UINT8_T).
  static MPI_Datatype type(DataType dtype);
  // The op combining two values of `dtype` (kAverage as a sum: the 1/n is the
  // caller's postscale).
  MPI_Op op(DataType dtype, ReduceOp op) const;

 private:
  // [user type][op]
  std::array<std::array<MPI_Op, kNumReduceOps>, kUserTypeCount> user_ops_{};
};

}  // namespace kolo::backends::mpi
