#include "core/tensor_validation.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <numeric>

#include "common/error.h"
#include "core/operation_table.h"
#include "core/tensor_entry.h"

namespace kolo::core {

void validate_request(Request& request, const void* input, const void* output, int set_size) {
  const std::string& name = request.name;
  auto fail = [&](const std::string& why) {
    throw InvalidArgument(
        fmt::format("{} of tensor '{}': {}", op_type_name(request.op), name, why));
  };
  const OperationInfo& operation = operation_info(request.op);
  if (!operation.moves_data) return;
  if (request.device != kCpuDevice) {
    // The GPU path (docs/architecture.md, "GPUs") is not written yet: the
    // binding hands CUDA tensors here only when the CUDA plugin saw a device.
    fail(
        fmt::format("the tensor is on cuda:{}, but Kolo's engine does not run collectives on "
                    "CUDA tensors yet; move the tensor to the CPU",
                    request.device));
  }
  for (int64_t dim : request.shape) {
    if (dim < 0)
      fail(fmt::format("shape [{}] has a negative dimension", fmt::join(request.shape, ", ")));
  }
  if (operation.first_dimension != FirstDimension::kAny && request.shape.empty()) {
    fail("a scalar has no first dimension to split or gather along");
  }
  int64_t elements = num_elements(request.shape);
  if (elements > 0 && input == nullptr) fail("the input pointer is null");
  if (elements > 0 && operation.output != OutputBuffer::kEngine && output == nullptr) {
    fail("the output pointer is null");
  }
  // The one check of a reduction: every API reaches the engine through
  // here, and the layers below assume it.
  if (operation.reduces) {
    std::string problem = reduction_problem(request.reduction, request.dtype);
    if (!problem.empty()) fail(problem);
    if (request.reduction.op == ReduceOp::kAdasum) {
      // Horovod's rules: an allreduce only, on a power-of-two group (its
      // vector halving pairs every rank at every level).
      if (request.op != OpType::kAllreduce) fail("Adasum is defined for allreduce only");
      if ((set_size & (set_size - 1)) != 0) {
        fail(fmt::format(
            "Adasum needs a power-of-two number of ranks, as in Horovod; the process set has {}",
            set_size));
      }
    }
  }
  if (operation.has_root && (request.root < 0 || request.root >= set_size)) {
    fail(
        fmt::format("root rank {} is outside the process set of {} ranks", request.root, set_size));
  }
  if (request.op == OpType::kAlltoall) {
    int64_t rows = request.shape[0];
    auto& splits = request.values;
    if (splits.empty()) {
      if (rows % set_size != 0) {
        fail(fmt::format("first dimension {} does not divide into {} equal parts; pass splits",
                         rows, set_size));
      }
      splits.assign(static_cast<size_t>(set_size), rows / set_size);
    }
    if (static_cast<int>(splits.size()) != set_size) {
      fail(fmt::format("{} splits given for {} ranks", splits.size(), set_size));
    }
    for (int64_t s : splits) {
      if (s < 0) fail(fmt::format("splits [{}] have a negative entry", fmt::join(splits, ", ")));
    }
    int64_t sum = std::accumulate(splits.begin(), splits.end(), int64_t{0});
    if (sum != rows) {
      fail(fmt::format("splits [{}] add up to {}, but the first dimension is {}",
                       fmt::join(splits, ", "), sum, rows));
    }
  }
}

}  // namespace kolo::core
