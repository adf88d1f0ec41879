// Engine's caller side (core/engine.h): the public operations validate
// their tensors and queue them for the background thread (engine.cc runs
// the cycles). A backward pass calls these once per gradient, so the
// single-tensor path (enqueue_one) builds no vectors.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "common/error.h"
#include "core/engine.h"
#include "core/tensor_validation.h"

namespace kolo::core {
namespace {

Request reduce_request(const Reduction& reduce) {
  Request base;
  base.reduction = reduce;
  return base;
}

// Operations that move no tensor (barrier, join, process-set changes) still
// go through the queue and negotiation; an empty name means "by call order".
TensorArgs control_operation(std::string name) {
  TensorArgs none;
  none.name = std::move(name);
  none.dtype = DataType::kUInt8;
  none.shape = {0};
  return none;
}

}  // namespace

ProcessSet& Engine::member_set(int32_t id) const {
  auto it = sets_.find(id);
  if (it == sets_.end()) throw InvalidArgument(fmt::format("process set {} does not exist", id));
  if (!it->second->member()) {
    throw InvalidArgument(fmt::format("rank {} is not a member of process set {} (ranks [{}])",
                                      config_.layout.rank, id, fmt::join(it->second->ranks, ", ")));
  }
  return *it->second;
}

TensorEntry Engine::make_entry(OpType op, TensorArgs& tensor, const Request& base, ProcessSet& set,
                               Clock::time_point enqueued) {
  TensorEntry entry;
  entry.enqueued = enqueued;
  entry.request = base;
  entry.request.op = op;
  entry.request.name = tensor.name.empty()
                           ? fmt::format("{}.noname.{}", op_type_name(op),
                                         ++set.unnamed_counters.under(mutex_)[static_cast<int>(op)])
                           : std::move(tensor.name);
  entry.request.dtype = tensor.dtype;
  entry.request.shape = std::move(tensor.shape);
  entry.request.device = tensor.device;
  validate_request(entry.request, tensor.input, tensor.output, static_cast<int>(set.ranks.size()));
  entry.input = tensor.input;
  entry.output = tensor.output;
  entry.handle = std::make_shared<HandleState>(handle_links_);
  return entry;
}

Status Engine::stopped_status() const {
  return failure_.ok() ? Status(StatusCode::kAborted, "Kolo has been shut down") : failure_;
}

std::vector<Handle> Engine::enqueue(OpType op, std::vector<TensorArgs> tensors, const Request& base,
                                    int32_t process_set) {
  MutexLock lock(mutex_);
  // Bad arguments are reported as such even after the job stopped.
  ProcessSet& set = member_set(process_set);
  std::vector<TensorEntry> entries;
  std::vector<Handle> handles;
  entries.reserve(tensors.size());
  handles.reserve(tensors.size());
  std::string group;
  const auto enqueued = Clock::now();
  for (auto& tensor : tensors) {
    TensorEntry entry = make_entry(op, tensor, base, set, enqueued);
    if (tensors.size() > 1) {
      if (group.empty()) group = entry.request.name;
      entry.request.group = group;
      entry.request.group_size = static_cast<int32_t>(tensors.size());
    }
    handles.push_back(entry.handle);
    entries.push_back(std::move(entry));
  }
  if (stopped_) {
    const Status status = stopped_status();
    for (auto& handle : handles) handle->complete(status);
    return handles;
  }
  const bool wake = queue_up(set, std::move(entries), enqueued);
  lock.unlock();
  if (wake) pacer_->wake();
  return handles;
}

Handle Engine::enqueue_one(OpType op, TensorArgs tensor, const Request& base, int32_t process_set) {
  MutexLock lock(mutex_);
  ProcessSet& set = member_set(process_set);
  const auto enqueued = Clock::now();
  TensorEntry entry = make_entry(op, tensor, base, set, enqueued);
  Handle handle = entry.handle;
  if (stopped_) {
    handle->complete(stopped_status());
    return handle;
  }
  const bool wake = queue_up(set, std::move(entry), enqueued);
  lock.unlock();
  if (wake) pacer_->wake();
  return handle;
}

Handle Engine::allreduce(TensorArgs tensor, Reduction reduce, int32_t process_set) {
  return enqueue_one(OpType::kAllreduce, std::move(tensor), reduce_request(reduce), process_set);
}

std::vector<Handle> Engine::grouped_allreduce(std::vector<TensorArgs> tensors, Reduction reduce,
                                              int32_t process_set) {
  return enqueue(OpType::kAllreduce, std::move(tensors), reduce_request(reduce), process_set);
}

Handle Engine::allgather(TensorArgs tensor, int32_t process_set) {
  return enqueue_one(OpType::kAllgather, std::move(tensor), Request{}, process_set);
}

std::vector<Handle> Engine::grouped_allgather(std::vector<TensorArgs> tensors,
                                              int32_t process_set) {
  return enqueue(OpType::kAllgather, std::move(tensors), Request{}, process_set);
}

Handle Engine::broadcast(TensorArgs tensor, int root, int32_t process_set) {
  Request base;
  base.root = root;
  return enqueue_one(OpType::kBroadcast, std::move(tensor), base, process_set);
}

Handle Engine::alltoall(TensorArgs tensor, std::vector<int64_t> splits, int32_t process_set) {
  Request base;
  base.values = std::move(splits);
  return enqueue_one(OpType::kAlltoall, std::move(tensor), base, process_set);
}

Handle Engine::reducescatter(TensorArgs tensor, Reduction reduce, int32_t process_set) {
  return enqueue_one(OpType::kReducescatter, std::move(tensor), reduce_request(reduce),
                     process_set);
}

std::vector<Handle> Engine::grouped_reducescatter(std::vector<TensorArgs> tensors, Reduction reduce,
                                                  int32_t process_set) {
  return enqueue(OpType::kReducescatter, std::move(tensors), reduce_request(reduce), process_set);
}

Handle Engine::barrier(int32_t process_set) {
  return enqueue_one(OpType::kBarrier, control_operation(""), Request{}, process_set);
}

Handle Engine::join(int32_t process_set) {
  return enqueue_one(OpType::kJoin, control_operation("kolo.join"), Request{}, process_set);
}

Handle Engine::add_process_set(std::vector<int> ranks) {
  std::vector<int> normalized = normalize_process_set_ranks(std::move(ranks), config_.layout.size);
  Request base;
  base.values.assign(normalized.begin(), normalized.end());
  return enqueue_one(OpType::kAddProcessSet, control_operation(""), base, 0);
}

Handle Engine::remove_process_set(int32_t id) {
  {
    MutexLock lock(mutex_);
    if (id == 0) throw InvalidArgument("the global process set (id 0) cannot be removed");
    if (sets_.count(id) == 0)
      throw InvalidArgument(fmt::format("process set {} does not exist", id));
  }
  Request base;
  base.values = {id};
  return enqueue_one(OpType::kRemoveProcessSet,
                     control_operation(fmt::format("kolo.remove_process_set.{}", id)), base, 0);
}

}  // namespace kolo::core
