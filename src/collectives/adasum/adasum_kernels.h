// The two per-element kernels of Adasum (adasum.h): the dot product and
// squared norms of two slices, and their combination a = ca*a + cb*b.
// Sums are taken in double for every floating type, as Horovod's kernels do,
// because the coefficients divide by them; the combination is computed in
// double for float32/float64 and in float for float16/bfloat16 (Horovod's
// float16 kernel works in float), rounded once to the type.
//
// Only the floating types are accepted; anything else is a caller's bug and
// throws InternalError.
#pragma once

#include <cstddef>

#include "kolo/types.h"

namespace kolo::collectives::adasum {

struct DotAndNorms {
  double dot = 0;        // sum a[i]*b[i]
  double a_norm_sq = 0;  // sum a[i]^2
  double b_norm_sq = 0;  // sum b[i]^2
};

DotAndNorms dot_and_norms(const void* a, const void* b, size_t count, DataType dtype);

// a[i] = a_coeff * a[i] + b_coeff * b[i] for i in [0, count).
void scaled_add(void* a, double a_coeff, const void* b, double b_coeff, size_t count,
                DataType dtype);

}  // namespace kolo::collectives::adasum
