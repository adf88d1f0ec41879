// The kernels at the compiler's baseline instruction set: the fallback on
// every CPU and the reference the other levels must match bit for bit.
#define KOLO_REDUCE_LEVEL portable
#include "collectives/reduce/loops.h"

namespace kolo::reduce::simd {

const Kernels& portable_kernels() {
  return kernels::portable::kLevelKernels;
}

}  // namespace kolo::reduce::simd
