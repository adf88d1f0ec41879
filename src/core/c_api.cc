// The C API (include/kolo/c_api.h) over the public kolo::Engine. It holds
// the process's default engine and the table of handle ids: the only
// process-wide state Kolo has, because a C caller has no object to keep it in.
// Everything else lives in an Engine, so init -> shutdown -> init works.
#include "kolo/c_api.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/error.h"
#include "kolo/engine.h"

namespace kolo {
namespace {

// The C enums are the C++ ones written out for C; they must not drift.
static_assert(KOLO_OK == static_cast<int>(StatusCode::kOk));
static_assert(KOLO_INVALID_ARGUMENT == static_cast<int>(StatusCode::kInvalidArgument));
static_assert(KOLO_TIMEOUT == static_cast<int>(StatusCode::kTimeout));
static_assert(KOLO_PEER_LOST == static_cast<int>(StatusCode::kPeerLost));
static_assert(KOLO_IO_ERROR == static_cast<int>(StatusCode::kIoError));
static_assert(KOLO_ABORTED == static_cast<int>(StatusCode::kAborted));
static_assert(KOLO_UNAUTHENTICATED == static_cast<int>(StatusCode::kUnauthenticated));
static_assert(KOLO_NOT_FOUND == static_cast<int>(StatusCode::kNotFound));
static_assert(KOLO_INTERNAL == static_cast<int>(StatusCode::kInternal));
static_assert(KOLO_REMOVED == static_cast<int>(StatusCode::kRemoved));
static_assert(KOLO_UINT8 == static_cast<int>(DataType::kUInt8));
static_assert(KOLO_FLOAT16 == static_cast<int>(DataType::kFloat16));
static_assert(KOLO_BFLOAT16 == static_cast<int>(DataType::kBFloat16));
static_assert(KOLO_FLOAT32 == static_cast<int>(DataType::kFloat32));
static_assert(KOLO_BOOL == static_cast<int>(DataType::kBool));
static_assert(KOLO_INT16 == static_cast<int>(DataType::kInt16) &&
              static_cast<int>(KOLO_INT16) + 1 == kNumDataTypes);
static_assert(KOLO_SUM == static_cast<int>(ReduceOp::kSum));
static_assert(KOLO_AVERAGE == static_cast<int>(ReduceOp::kAverage));
static_assert(KOLO_BIT_OR == static_cast<int>(ReduceOp::kBitOr));
static_assert(KOLO_ADASUM == static_cast<int>(ReduceOp::kAdasum) &&
              static_cast<int>(KOLO_ADASUM) + 1 == kNumReduceOps);
static_assert(KOLO_CPU_DEVICE == kCpuDevice);

struct HandleEntry {
  Handle handle;
  // Filled once the operation finished, then never changed, so the pointer
  // kolo_handle_error() returns stays valid until release.
  std::string error;
  bool error_cached = false;
};

class DefaultEngine {
 public:
  // Deliberately never destroyed: a program that exits without
  // kolo_shutdown() must not run the engine's destructor after the logging
  // and allocator statics it uses are gone.
  static DefaultEngine& get() {
    static auto* instance = new DefaultEngine;
    return *instance;
  }

  // Serializes init and shutdown, which are collective and may block for
  // the rendezvous timeout; held across them so `mutex` never is.
  std::mutex lifecycle;
  // Guards the members below; held only for quick lookups.
  std::mutex mutex;
  // Shared so a call that is enqueueing while another thread shuts down
  // keeps its engine alive (it then gets an already-aborted handle).
  std::shared_ptr<Engine> engine;
  std::map<kolo_handle, std::unique_ptr<HandleEntry>> handles;
  kolo_handle next_handle = 1;
};

std::string& last_error() {
  thread_local std::string text;
  return text;
}

[[noreturn]] void invalid(std::string text) {
  throw Exception(Status(StatusCode::kInvalidArgument, std::move(text)));
}

// Records the exception in flight as this thread's last error; returns its code.
int record_current_exception() {
  const Status status = status_from_current_exception();
  last_error() = status.message();
  return static_cast<int>(status.code());
}

// Runs `body`; KOLO_OK, or the code of what it threw. Nothing escapes to C.
template <class Body>
int guarded(Body&& body) {
  try {
    body();
    return KOLO_OK;
  } catch (...) {
    return record_current_exception();
  }
}

std::shared_ptr<Engine> current_engine() {
  DefaultEngine& state = DefaultEngine::get();
  std::lock_guard lock(state.mutex);
  if (!state.engine) invalid("Kolo is not initialized; call kolo_init() first");
  return state.engine;
}

kolo_handle register_handle(Handle handle) {
  DefaultEngine& state = DefaultEngine::get();
  std::lock_guard lock(state.mutex);
  kolo_handle id = state.next_handle++;
  state.handles[id] = std::make_unique<HandleEntry>(HandleEntry{std::move(handle), {}, false});
  return id;
}

// Requires DefaultEngine::mutex.
HandleEntry& entry_locked(DefaultEngine& state, kolo_handle id) {
  auto it = state.handles.find(id);
  if (it == state.handles.end()) {
    invalid(fmt::format(
        "unknown kolo handle {} (never returned by an enqueue, or already released)", id));
  }
  return *it->second;
}

Handle find_handle(kolo_handle id) {
  DefaultEngine& state = DefaultEngine::get();
  std::lock_guard lock(state.mutex);
  return entry_locked(state, id).handle;
}

// Reads something from a handle's entry under the mutex; `fallback` (and
// the last error) for an unknown handle.
template <class T, class Read>
T read_handle(kolo_handle id, T fallback, Read&& read) {
  T value = fallback;
  guarded([&] {
    DefaultEngine& state = DefaultEngine::get();
    std::lock_guard lock(state.mutex);
    value = read(entry_locked(state, id));
  });
  return value;
}

// Runs an enqueue on the default engine; the new handle's id, or the negated
// status code.
template <class Body>
kolo_handle enqueue(Body&& body) {
  kolo_handle id = 0;
  int code = guarded([&] {
    std::shared_ptr<Engine> engine = current_engine();
    id = register_handle(body(*engine));
  });
  return code == KOLO_OK ? id : -static_cast<kolo_handle>(code);
}

int enqueue_group(int count, kolo_handle* handles,
                  const std::function<std::vector<Handle>(Engine&)>& body) {
  int code = guarded([&] {
    if (count < 0) invalid(fmt::format("count {} is negative", count));
    if (count > 0 && handles == nullptr) invalid("handles is NULL");
    std::shared_ptr<Engine> engine = current_engine();
    std::vector<Handle> group = body(*engine);
    for (size_t i = 0; i < group.size() && i < static_cast<size_t>(count); ++i) {
      handles[i] = register_handle(std::move(group[i]));
    }
  });
  if (code != KOLO_OK && handles != nullptr) {
    for (int i = 0; i < count; ++i) handles[i] = -code;
  }
  return code;
}

Tensor to_tensor(const kolo_tensor* tensor) {
  if (tensor == nullptr) invalid("tensor is NULL");
  if (tensor->dtype < 0 || tensor->dtype >= kNumDataTypes) {
    invalid(fmt::format("dtype {} is not a kolo_dtype (0..{})", tensor->dtype, kNumDataTypes - 1));
  }
  if (tensor->ndim < 0) invalid(fmt::format("ndim {} is negative", tensor->ndim));
  if (tensor->ndim > 0 && tensor->shape == nullptr)
    invalid(fmt::format("shape is NULL but ndim is {}", tensor->ndim));
  Tensor out;
  out.data = tensor->input;
  out.dtype = static_cast<DataType>(tensor->dtype);
  out.shape.assign(tensor->shape, tensor->shape + tensor->ndim);
  out.device = tensor->device;
  return out;
}

std::string name_of(const char* name) {
  return name ? std::string(name) : std::string();
}

ReduceOptions reduce_options(int op, double prescale, double postscale, int process_set,
                             const char* name) {
  if (op < 0 || op >= kNumReduceOps) {
    invalid(fmt::format("reduce op {} is not a kolo_reduce_op (0..{})", op, kNumReduceOps - 1));
  }
  ReduceOptions options;
  options.op = static_cast<ReduceOp>(op);
  options.prescale = prescale;
  options.postscale = postscale;
  options.name = name_of(name);
  options.process_set = process_set;
  return options;
}

// Grouped calls name the group; the members are "<name>.<i>" as in the C++
// API, so a member name of its own would be silently lost: refuse it.
std::vector<Tensor> to_group(const kolo_tensor* tensors, int count, std::vector<void*>* outputs) {
  if (count > 0 && tensors == nullptr) invalid("tensors is NULL");
  std::vector<Tensor> group;
  for (int i = 0; i < count; ++i) {
    if (tensors[i].name != nullptr && tensors[i].name[0] != '\0') {
      invalid(
          fmt::format("grouped operation: tensors[{}].name is '{}'; pass the group's name instead "
                      "(member i is named '<name>.<i>')",
                      i, tensors[i].name));
    }
    group.push_back(to_tensor(&tensors[i]));
    if (outputs) outputs->push_back(tensors[i].output);
  }
  return group;
}

int init_engine(InitOptions options, bool strict) {
  DefaultEngine& state = DefaultEngine::get();
  std::lock_guard lifecycle(state.lifecycle);
  return guarded([&] {
    {
      std::lock_guard lock(state.mutex);
      if (state.engine) {
        if (strict)
          invalid(
              "Kolo is already initialized; call kolo_shutdown() before initializing with process "
              "sets");
        return;
      }
    }
    auto engine = std::make_shared<Engine>(std::move(options));
    std::lock_guard lock(state.mutex);
    state.engine = std::move(engine);
  });
}

template <class Get>
int layout_value(Get&& get) {
  int value = -1;
  guarded([&] { value = get(*current_engine()); });
  return value;
}

}  // namespace
}  // namespace kolo

using kolo::Engine;
using kolo::Handle;

extern "C" {

int kolo_init(void) {
  return kolo::init_engine({}, false);
}

int kolo_init_with_process_sets(const int* ranks, const int* set_sizes, int num_sets) {
  kolo::InitOptions options;
  int code = kolo::guarded([&] {
    if (num_sets < 0) kolo::invalid(fmt::format("num_sets {} is negative", num_sets));
    if (num_sets > 0 && set_sizes == nullptr) kolo::invalid("set_sizes is NULL");
    size_t next = 0;
    for (int i = 0; i < num_sets; ++i) {
      if (set_sizes[i] < 0)
        kolo::invalid(fmt::format("set_sizes[{}] = {} is negative", i, set_sizes[i]));
      if (set_sizes[i] > 0 && ranks == nullptr) kolo::invalid("ranks is NULL");
      options.process_sets.emplace_back(ranks + next, ranks + next + set_sizes[i]);
      next += static_cast<size_t>(set_sizes[i]);
    }
  });
  if (code != KOLO_OK) return code;
  return kolo::init_engine(std::move(options), true);
}

int kolo_shutdown(void) {
  kolo::DefaultEngine& state = kolo::DefaultEngine::get();
  std::lock_guard lifecycle(state.lifecycle);
  return kolo::guarded([&] {
    std::shared_ptr<Engine> engine;
    {
      std::lock_guard lock(state.mutex);
      engine = std::move(state.engine);
    }
    // Outside the mutex: shutdown is collective and waits for the peers.
    if (engine) engine->shutdown();
  });
}

int kolo_is_initialized(void) {
  kolo::DefaultEngine& state = kolo::DefaultEngine::get();
  std::lock_guard lock(state.mutex);
  return state.engine ? 1 : 0;
}

int kolo_rank(void) {
  return kolo::layout_value([](Engine& e) { return e.rank(); });
}
int kolo_size(void) {
  return kolo::layout_value([](Engine& e) { return e.size(); });
}
int kolo_local_rank(void) {
  return kolo::layout_value([](Engine& e) { return e.local_rank(); });
}
int kolo_local_size(void) {
  return kolo::layout_value([](Engine& e) { return e.local_size(); });
}
int kolo_cross_rank(void) {
  return kolo::layout_value([](Engine& e) { return e.cross_rank(); });
}
int kolo_cross_size(void) {
  return kolo::layout_value([](Engine& e) { return e.cross_size(); });
}

const char* kolo_last_error(void) {
  return kolo::last_error().c_str();
}

kolo_handle kolo_allreduce(const kolo_tensor* tensor, int op, double prescale, double postscale,
                           int process_set) {
  return kolo::enqueue([&](Engine& engine) {
    kolo::Tensor t = kolo::to_tensor(tensor);
    return engine.allreduce(
        t, tensor->output,
        kolo::reduce_options(op, prescale, postscale, process_set, tensor->name));
  });
}

int kolo_grouped_allreduce(const kolo_tensor* tensors, int count, int op, double prescale,
                           double postscale, int process_set, const char* name,
                           kolo_handle* handles) {
  return kolo::enqueue_group(count, handles, [&](Engine& engine) {
    std::vector<void*> outputs;
    auto group = kolo::to_group(tensors, count, &outputs);
    return engine.grouped_allreduce(
        group, outputs, kolo::reduce_options(op, prescale, postscale, process_set, name));
  });
}

kolo_handle kolo_allgather(const kolo_tensor* tensor, int process_set) {
  return kolo::enqueue([&](Engine& engine) {
    kolo::Tensor t = kolo::to_tensor(tensor);
    return engine.allgather(t, {kolo::name_of(tensor->name), process_set});
  });
}

int kolo_grouped_allgather(const kolo_tensor* tensors, int count, int process_set, const char* name,
                           kolo_handle* handles) {
  return kolo::enqueue_group(count, handles, [&](Engine& engine) {
    return engine.grouped_allgather(kolo::to_group(tensors, count, nullptr),
                                    {kolo::name_of(name), process_set});
  });
}

kolo_handle kolo_broadcast(const kolo_tensor* tensor, int root, int process_set) {
  return kolo::enqueue([&](Engine& engine) {
    kolo::Tensor t = kolo::to_tensor(tensor);
    return engine.broadcast(t, tensor->output, {root, kolo::name_of(tensor->name), process_set});
  });
}

kolo_handle kolo_alltoall(const kolo_tensor* tensor, const int64_t* splits, int num_splits,
                          int process_set) {
  return kolo::enqueue([&](Engine& engine) {
    kolo::Tensor t = kolo::to_tensor(tensor);
    if (num_splits < 0) kolo::invalid(fmt::format("num_splits {} is negative", num_splits));
    if (num_splits > 0 && splits == nullptr)
      kolo::invalid("splits is NULL but num_splits is not 0");
    kolo::AlltoallOptions options;
    if (num_splits > 0) options.splits.assign(splits, splits + num_splits);
    options.name = kolo::name_of(tensor->name);
    options.process_set = process_set;
    return engine.alltoall(t, options);
  });
}

kolo_handle kolo_reducescatter(const kolo_tensor* tensor, int op, double prescale, double postscale,
                               int process_set) {
  return kolo::enqueue([&](Engine& engine) {
    kolo::Tensor t = kolo::to_tensor(tensor);
    return engine.reducescatter(
        t, kolo::reduce_options(op, prescale, postscale, process_set, tensor->name));
  });
}

int kolo_grouped_reducescatter(const kolo_tensor* tensors, int count, int op, double prescale,
                               double postscale, int process_set, const char* name,
                               kolo_handle* handles) {
  return kolo::enqueue_group(count, handles, [&](Engine& engine) {
    auto group = kolo::to_group(tensors, count, nullptr);
    return engine.grouped_reducescatter(
        group, kolo::reduce_options(op, prescale, postscale, process_set, name));
  });
}

kolo_handle kolo_barrier(int process_set) {
  return kolo::enqueue([&](Engine& engine) { return engine.barrier(process_set); });
}

kolo_handle kolo_join(int process_set) {
  return kolo::enqueue([&](Engine& engine) { return engine.join(process_set); });
}

kolo_handle kolo_add_process_set(const int* ranks, int num_ranks) {
  return kolo::enqueue([&](Engine& engine) {
    if (num_ranks < 0) kolo::invalid(fmt::format("num_ranks {} is negative", num_ranks));
    if (num_ranks > 0 && ranks == nullptr) kolo::invalid("ranks is NULL but num_ranks is not 0");
    return engine.add_process_set(std::vector<int>(ranks, ranks + num_ranks));
  });
}

kolo_handle kolo_remove_process_set(int process_set) {
  return kolo::enqueue([&](Engine& engine) { return engine.remove_process_set(process_set); });
}

int kolo_start_timeline(const char* path, int mark_cycles) {
  return kolo::guarded([&] {
    if (path == nullptr || path[0] == '\0') kolo::invalid("timeline path is empty");
    kolo::current_engine()->start_timeline(path, mark_cycles != 0);
  });
}

int kolo_stop_timeline(void) {
  return kolo::guarded([&] { kolo::current_engine()->stop_timeline(); });
}

int kolo_poll(kolo_handle handle) {
  int done = 0;
  int code = kolo::guarded([&] { done = kolo::find_handle(handle).isCompleted() ? 1 : 0; });
  return code == KOLO_OK ? done : -code;
}

int kolo_wait(kolo_handle handle, double timeout_seconds) {
  int result = KOLO_IN_PROGRESS;
  int code = kolo::guarded([&] {
    if (std::isnan(timeout_seconds)) kolo::invalid("timeout_seconds is NaN");
    // Waits without the C API's mutex: other threads keep enqueueing.
    Handle h = kolo::find_handle(handle);
    if (timeout_seconds < 0) {
      result = static_cast<int>(h.wait().code());
      return;
    }
    // Capped so that now() + timeout cannot overflow the clock.
    double capped = std::min(timeout_seconds, 1e9);
    auto timeout =
        std::chrono::ceil<std::chrono::milliseconds>(std::chrono::duration<double>(capped));
    result = h.wait(timeout) ? static_cast<int>(h.status().code()) : KOLO_IN_PROGRESS;
  });
  return code == KOLO_OK ? result : code;
}

int kolo_handle_status(kolo_handle handle) {
  return kolo::read_handle(
      handle, static_cast<int>(KOLO_INVALID_ARGUMENT), [](kolo::HandleEntry& e) {
        return e.handle.isCompleted() ? static_cast<int>(e.handle.status().code())
                                      : static_cast<int>(KOLO_IN_PROGRESS);
      });
}

const char* kolo_handle_error(kolo_handle handle) {
  return kolo::read_handle(handle, static_cast<const char*>(nullptr),
                           [](kolo::HandleEntry& e) -> const char* {
                             if (!e.error_cached && e.handle.isCompleted()) {
                               e.error = e.handle.error();
                               e.error_cached = true;
                             }
                             return e.error_cached ? e.error.c_str() : "";
                           });
}

const void* kolo_handle_data(kolo_handle handle) {
  return kolo::read_handle(handle, static_cast<const void*>(nullptr),
                           [](kolo::HandleEntry& e) { return e.handle.data(); });
}

int64_t kolo_handle_nbytes(kolo_handle handle) {
  return kolo::read_handle(handle, int64_t{-1}, [](kolo::HandleEntry& e) {
    return static_cast<int64_t>(e.handle.nbytes());
  });
}

int kolo_handle_ndim(kolo_handle handle) {
  return kolo::read_handle(handle, -1, [](kolo::HandleEntry& e) {
    return e.handle.isCompleted() ? static_cast<int>(e.handle.shape().size()) : -1;
  });
}

const int64_t* kolo_handle_shape(kolo_handle handle) {
  return kolo::read_handle(handle, static_cast<const int64_t*>(nullptr), [](kolo::HandleEntry& e) {
    const auto& shape = e.handle.shape();
    return shape.empty() ? nullptr : shape.data();
  });
}

int kolo_handle_num_received_splits(kolo_handle handle) {
  return kolo::read_handle(handle, -1, [](kolo::HandleEntry& e) {
    return e.handle.isCompleted() ? static_cast<int>(e.handle.received_splits().size()) : -1;
  });
}

const int64_t* kolo_handle_received_splits(kolo_handle handle) {
  return kolo::read_handle(handle, static_cast<const int64_t*>(nullptr), [](kolo::HandleEntry& e) {
    const auto& splits = e.handle.received_splits();
    return splits.empty() ? nullptr : splits.data();
  });
}

int64_t kolo_handle_value(kolo_handle handle) {
  return kolo::read_handle(handle, int64_t{-1},
                           [](kolo::HandleEntry& e) { return e.handle.value(); });
}

int kolo_release(kolo_handle handle) {
  bool running = false;
  int code = kolo::guarded([&] {
    kolo::DefaultEngine& state = kolo::DefaultEngine::get();
    std::lock_guard lock(state.mutex);
    kolo::HandleEntry& entry = kolo::entry_locked(state, handle);
    // The engine may still write the caller's output and the handle's
    // result; forgetting the handle now would hide that from the caller.
    running = !entry.handle.isCompleted();
    if (!running) state.handles.erase(handle);
  });
  if (code != KOLO_OK) return code;
  if (running) {
    kolo::last_error() =
        fmt::format("kolo handle {} is still running; wait for it before releasing it", handle);
    return KOLO_IN_PROGRESS;
  }
  return KOLO_OK;
}

}  // extern "C"
