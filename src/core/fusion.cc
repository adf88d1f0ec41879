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

std::vector<Response> fuse_responses(std::vector<Response> responses, size_t threshold_bytes) {
  std::vector<Response> out;
  std::vector<bool> used(responses.size(), false);
  for (size_t i = 0; i < responses.size(); ++i) {
    if (used[i]) continue;
    used[i] = true;
    Response fused = std::move(responses[i]);
    if (fusable(fused)) {
      size_t bytes = response_bytes(fused);
      for (size_t j = i + 1; j < responses.size() && bytes < threshold_bytes; ++j) {
        if (used[j] || !fusable(responses[j]) || !compatible(fused, responses[j])) continue;
        size_t more = response_bytes(responses[j]);
        if (bytes + more > threshold_bytes) continue;
        bytes += more;
        used[j] = true;
        for (auto& name : responses[j].names) fused.names.push_back(std::move(name));
        for (auto& shape : responses[j].shapes) fused.shapes.push_back(std::move(shape));
      }
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
