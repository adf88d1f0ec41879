#include "core/executor.h"

#include <fmt/format.h>

#include <cstring>

#include "common/check.h"
#include "common/error.h"
#include "common/even_shards.h"
#include "common/quoted_list.h"
#include "core/operation_table.h"
#include "core/timeline.h"

namespace kolo::core {
namespace {

size_t bytes_of(const std::vector<int64_t>& shape, DataType dtype) {
  return static_cast<size_t>(num_elements(shape)) * dtype_size(dtype);
}

std::vector<int64_t> with_first_dim(std::vector<int64_t> shape, int64_t rows) {
  if (shape.empty()) return {rows};
  shape[0] = rows;
  return shape;
}

std::string describe(const Response& response) {
  return fmt::format("{} of {}", op_type_name(response.op), quoted_list(response.names));
}

constexpr std::string_view kAllreduceActivity = operation_info(OpType::kAllreduce).activity;

// An operation that neither fuses nor runs on a joined rank (see the
// operation table) has exactly its one tensor on every rank.
TensorEntry& only_entry(const Response& response,
                        std::vector<std::optional<TensorEntry>>& entries) {
  const OperationInfo& operation = operation_info(response.op);
  KOLO_CHECK(!operation.fusable && !operation.runs_on_joined_rank);
  if (entries.size() != 1 || !entries[0]) {
    throw InternalError(fmt::format("{} reached a rank without its tensor", describe(response)));
  }
  return *entries[0];
}

}  // namespace

// Marks an activity on the timeline row of every tensor of the response for
// the lifetime of the object.
class Executor::Activity {
 public:
  Activity(Timeline* timeline, const Response& response, std::string_view name)
      : timeline_(timeline && timeline->active() ? timeline : nullptr), response_(response) {
    if (timeline_) {
      for (const auto& tensor : response_.names) timeline_->activity_start(tensor, name);
    }
  }
  ~Activity() {
    if (timeline_) {
      for (const auto& tensor : response_.names) timeline_->activity_end(tensor);
    }
  }
  Activity(const Activity&) = delete;
  Activity& operator=(const Activity&) = delete;

 private:
  Timeline* timeline_;
  const Response& response_;
};

void Executor::run(backends::Backend& backend, const Response& response,
                   std::vector<std::optional<TensorEntry>>& entries) {
  try {
    // Allreduce marks its own activities (fusion copies, then ALLREDUCE).
    // No default: a new OpType without its case here does not compile.
    std::optional<Activity> activity;
    if (response.op != OpType::kAllreduce) {
      activity.emplace(timeline_, response, operation_info(response.op).activity);
    }
    switch (response.op) {
      case OpType::kAllreduce:
        allreduce(backend, response, entries);
        return;
      case OpType::kBarrier:
        backend.barrier();
        return;
      case OpType::kAllgather:
        allgather(backend, response, only_entry(response, entries));
        return;
      case OpType::kBroadcast:
        broadcast(backend, response, only_entry(response, entries));
        return;
      case OpType::kAlltoall:
        alltoall(backend, response, only_entry(response, entries));
        return;
      case OpType::kReducescatter:
        reducescatter(backend, response, only_entry(response, entries));
        return;
      case OpType::kJoin:
      case OpType::kAddProcessSet:
      case OpType::kRemoveProcessSet:
        break;  // the engine runs these itself
    }
    throw InternalError(fmt::format("executor cannot run {}", describe(response)));
  } catch (const Error& e) {
    // The root cause (which peer, what happened) stays first; the tensor
    // it happened during comes after.
    throw Error(e.code(), fmt::format("{} (during {})", e.what(), describe(response)));
  }
}

void Executor::allreduce(backends::Backend& backend, const Response& response,
                         std::vector<std::optional<TensorEntry>>& entries) {
  size_t element = dtype_size(response.dtype);
  if (backend.reduces_parts_in_place(response.dtype, response.reduction)) {
    // Shared memory reads and writes the tensors where they are: its
    // staging copies replace the fusion buffer's. Checked first, so that a
    // joined rank (no tensor) takes the same path as the others.
    std::vector<backends::FusedPart> parts;
    parts.reserve(entries.size());
    for (size_t i = 0; i < entries.size(); ++i) {
      const auto count = static_cast<size_t>(num_elements(response.shapes[i]));
      parts.push_back({entries[i] ? entries[i]->input : nullptr,
                       entries[i] ? entries[i]->output : nullptr, count});
    }
    Activity activity(timeline_, response, kAllreduceActivity);
    backend.allreduce_parts(parts, response.dtype, response.reduction);
    return;
  }
  if (entries.size() == 1 && entries[0]) {
    TensorEntry& entry = *entries[0];
    Activity activity(timeline_, response, kAllreduceActivity);
    backend.allreduce(entry.input, entry.output,
                      static_cast<size_t>(num_elements(response.shapes[0])), response.dtype,
                      response.reduction);
    return;
  }
  size_t total = response_bytes(response);
  std::byte* fused = buffers_.get(response.device, total);
  size_t offset = 0;
  auto copy_in = std::make_optional<Activity>(timeline_, response, "MEMCPY_IN_FUSION_BUFFER");
  for (size_t i = 0; i < entries.size(); ++i) {
    size_t bytes = bytes_of(response.shapes[i], response.dtype);
    if (entries[i]) {
      std::memcpy(fused + offset, entries[i]->input, bytes);
    } else {
      std::memset(fused + offset, 0, bytes);  // a joined rank adds nothing
    }
    offset += bytes;
  }
  copy_in.reset();
  {
    Activity activity(timeline_, response, kAllreduceActivity);
    backend.allreduce(fused, fused, total / element, response.dtype, response.reduction);
  }
  Activity copy_out(timeline_, response, "MEMCPY_OUT_FUSION_BUFFER");
  offset = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    size_t bytes = bytes_of(response.shapes[i], response.dtype);
    if (entries[i]) std::memcpy(entries[i]->output, fused + offset, bytes);
    offset += bytes;
  }
}

void Executor::allgather(backends::Backend& backend, const Response& response, TensorEntry& entry) {
  int64_t row = row_elements(entry.request.shape);
  std::vector<size_t> counts;
  int64_t rows = 0;
  for (int64_t dim0 : response.values) {
    counts.push_back(static_cast<size_t>(dim0 * row));
    rows += dim0;
  }
  HandleResult& result = entry.handle->result();
  result.shape = with_first_dim(entry.request.shape, rows);
  result.data = outputs_.acquire(bytes_of(result.shape, response.dtype));
  backend.allgatherv(entry.input, result.data.data(), counts, response.dtype);
}

void Executor::broadcast(backends::Backend& backend, const Response& response, TensorEntry& entry) {
  size_t bytes = bytes_of(entry.request.shape, response.dtype);
  if (backend.rank() == response.root && entry.output != entry.input) {
    std::memcpy(entry.output, entry.input, bytes);
  }
  backend.broadcast(entry.output, static_cast<size_t>(num_elements(entry.request.shape)),
                    response.dtype, response.root);
}

void Executor::alltoall(backends::Backend& backend, const Response& response, TensorEntry& entry) {
  int n = backend.size();
  int64_t row = row_elements(entry.request.shape);
  std::vector<int64_t> send_rows = entry.request.values;
  std::vector<int64_t> recv_rows(static_cast<size_t>(n), 0);
  // Each rank learns how many rows every peer sends it before the data moves.
  std::vector<size_t> ones(static_cast<size_t>(n), 1);
  backend.alltoallv(send_rows.data(), ones, recv_rows.data(), ones, DataType::kInt64);
  std::vector<size_t> send_counts, recv_counts;
  int64_t total_rows = 0;
  for (int r = 0; r < n; ++r) {
    if (recv_rows[r] < 0) {
      throw InternalError(fmt::format("alltoall: rank {} announced {} rows", r, recv_rows[r]));
    }
    send_counts.push_back(static_cast<size_t>(send_rows[r] * row));
    recv_counts.push_back(static_cast<size_t>(recv_rows[r] * row));
    total_rows += recv_rows[r];
  }
  HandleResult& result = entry.handle->result();
  result.shape = with_first_dim(entry.request.shape, total_rows);
  result.received_splits = recv_rows;
  result.data = outputs_.acquire(bytes_of(result.shape, response.dtype));
  backend.alltoallv(entry.input, send_counts, result.data.data(), recv_counts, response.dtype);
}

void Executor::reducescatter(backends::Backend& backend, const Response& response,
                             TensorEntry& entry) {
  int n = backend.size();
  const auto& shape = entry.request.shape;
  int64_t dim0 = shape.empty() ? 1 : shape[0];
  int64_t row = row_elements(shape);
  // Whole rows are shared out (the first dim0 % n ranks get one more), never split.
  const auto rows_of = [&](int r) { return even_shard(static_cast<size_t>(dim0), n, r).count; };
  std::vector<size_t> counts;
  for (int r = 0; r < n; ++r) counts.push_back(rows_of(r) * static_cast<size_t>(row));
  HandleResult& result = entry.handle->result();
  result.shape = with_first_dim(shape, static_cast<int64_t>(rows_of(backend.rank())));
  result.data = outputs_.acquire(bytes_of(result.shape, response.dtype));
  backend.reduce_scatterv(entry.input, result.data.data(), counts, response.dtype,
                          response.reduction);
}

}  // namespace kolo::core
