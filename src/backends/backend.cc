#include "backends/backend.h"

#include <cstring>

namespace kolo::backends {

void Backend::allreduce_parts(const std::vector<FusedPart>& parts, DataType dtype,
                              const Reduction& reduction) {
  const size_t element = dtype_size(dtype);
  if (reduction.op == ReduceOp::kAdasum) {
    // Each tensor its own coefficients: one allreduce per part, with zeros
    // for a missing input and a scratch for a missing output.
    for (const FusedPart& p : parts) {
      std::vector<std::byte> stand_in;
      if (p.input == nullptr || p.output == nullptr)
        stand_in.assign(p.count * element, std::byte{0});
      allreduce(p.input != nullptr ? p.input : stand_in.data(),
                p.output != nullptr ? p.output : stand_in.data(), p.count, dtype, reduction);
    }
    return;
  }
  size_t total = 0;
  for (const FusedPart& p : parts) total += p.count;
  std::vector<std::byte> fused(total * element);
  size_t offset = 0;
  for (const FusedPart& p : parts) {
    if (p.input != nullptr) std::memcpy(fused.data() + offset, p.input, p.count * element);
    offset += p.count * element;  // a missing input contributes zeros
  }
  allreduce(fused.data(), fused.data(), total, dtype, reduction);
  offset = 0;
  for (const FusedPart& p : parts) {
    if (p.output != nullptr) std::memcpy(p.output, fused.data() + offset, p.count * element);
    offset += p.count * element;
  }
}

}  // namespace kolo::backends
