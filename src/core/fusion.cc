#include "core/fusion.h"

#include "core/operation_table.h"
#include "core/tensor_entry.h"

namespace kolo::core {
namespace {

bool fusable(const Response& r) {
  return r.kind == Response::Kind::kRun && operation_info(r.op).fusable;
}

bool compatible(const Response& a, const Response& b) {
  return a.dtype == b.dtype && a.reduction == b.reduction && a.device == b.device;
}

}  // namespace

size_t response_bytes(const Response& response) {
  size_t elements = 0;
  for (const auto& shape : response.shapes) elements += static_cast<size_t>(num_elements(shape));
  return elements * dtype_size(response.dtype);
}

std::vector<Response> fuse_responses(const std::vector<const Response*>& responses,
                                     size_t threshold_bytes) {
  std::vector<Response> out;
  std::vector<bool> used(responses.size(), false);
  std::vector<size_t> members;  // of the response being built, reused
  for (size_t i = 0; i < responses.size(); ++i) {
    if (used[i]) continue;
    used[i] = true;
    const Response& first = *responses[i];
    if (!fusable(first)) {
      out.push_back(first);
      continue;
    }
    // Members first, then one copy of each into the fused response.
    members.assign(1, i);
    size_t bytes = response_bytes(first);
    size_t tensors = first.names.size();
    for (size_t j = i + 1; j < responses.size() && bytes < threshold_bytes; ++j) {
      const Response& next = *responses[j];
      if (used[j] || !fusable(next) || !compatible(first, next)) continue;
      const size_t more = response_bytes(next);
      if (bytes + more > threshold_bytes) continue;
      bytes += more;
      tensors += next.names.size();
      used[j] = true;
      members.push_back(j);
    }
    Response fused = first;
    fused.names.reserve(tensors);
    fused.shapes.reserve(tensors);
    for (size_t m = 1; m < members.size(); ++m) {
      const Response& member = *responses[members[m]];
      fused.names.insert(fused.names.end(), member.names.begin(), member.names.end());
      fused.shapes.insert(fused.shapes.end(), member.shapes.begin(), member.shapes.end());
    }
    out.push_back(std::move(fused));
  }
  return out;
}

// Tensor i of a fused response as a response of its own (for the cache).
Response single_tensor(const Response& fused, size_t i) {
  Response one;
  one.kind = fused.kind;
  one.op = fused.op;
  one.names = {fused.names[i]};
  one.dtype = fused.dtype;
  one.reduction = fused.reduction;
  one.root = fused.root;
  one.device = fused.device;
  one.shapes = {fused.shapes[i]};
  one.values = fused.values;
  return one;
}

std::byte* FusionBuffers::get(int32_t device, size_t bytes) {
  auto& buffer = buffers_[device];
  if (buffer.size() < bytes) buffer.resize(bytes);
  return buffer.data();
}

}  // namespace kolo::core
