// kolo::Engine and kolo::Handle (include/kolo/engine.h) over core::Engine.
// The core's typed exceptions are kolo::Exceptions already; this file is the
// one place where they take the public API's what(), "<code>: <message>".
#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/error.h"
#include "core/handle_state.h"
#include "core/public_engine_internal.h"

namespace kolo {
namespace {

// Runs `body`. A core error (what() is its bare message, nested into other
// messages inside the core) is thrown again with the same Status as the public
// API words it; anything not Kolo's (std::bad_alloc, ...) becomes kInternal.
template <class Body>
auto translated(Body&& body) -> decltype(body()) {
  try {
    return body();
  } catch (const Error& e) {
    throw Exception(e.status());
  } catch (const Exception&) {
    throw;
  } catch (...) {
    throw Exception(status_from_current_exception());
  }
}

core::TensorArgs to_args(Tensor&& tensor, void* output, std::string name) {
  core::TensorArgs args;
  args.name = std::move(name);
  args.input = tensor.data;
  args.output = output;
  args.dtype = tensor.dtype;
  args.shape = std::move(tensor.shape);
  args.device = tensor.device;
  return args;
}

core::TensorArgs to_args(const Tensor& tensor, void* output, std::string name) {
  return to_args(Tensor(tensor), output, std::move(name));
}

// Grouped tensors get "<name>.<i>" so each is identifiable across ranks (and
// in errors and the timeline); an empty name keeps call-order matching.
std::string member_name(const std::string& group, size_t i) {
  return group.empty() ? std::string() : fmt::format("{}.{}", group, i);
}

std::vector<core::TensorArgs> to_group(const std::vector<Tensor>& inputs,
                                       const std::vector<void*>* outputs, const std::string& name) {
  if (outputs != nullptr && outputs->size() != inputs.size()) {
    throw InvalidArgument(fmt::format("grouped operation '{}': {} inputs but {} outputs", name,
                                      inputs.size(), outputs->size()));
  }
  std::vector<core::TensorArgs> group;
  group.reserve(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    group.push_back(to_args(inputs[i], outputs ? (*outputs)[i] : nullptr, member_name(name, i)));
  }
  return group;
}

// Handle's constructor is private to Engine, so Engine's methods pass a
// lambda that calls it.
template <class Wrap>
std::vector<Handle> wrap_all(std::vector<core::Handle> states, Wrap wrap) {
  std::vector<Handle> handles;
  handles.reserve(states.size());
  for (auto& state : states) handles.push_back(wrap(std::move(state)));
  return handles;
}

const std::vector<int64_t>& no_dims() {
  static const std::vector<int64_t> empty;  // immutable: not shared mutable state
  return empty;
}

}  // namespace

// --- Handle --------------------------------------------------------------

const core::HandleState& Handle::state() const {
  if (!state_) throw Exception(Status(StatusCode::kInvalidArgument, "kolo::Handle is empty"));
  return *state_;
}

const core::HandleState* Handle::finished() const {
  const core::HandleState& s = state();
  // done() takes the handle's mutex, so the result the background thread
  // wrote before complete() is visible once it returns true.
  return s.done() ? &s : nullptr;
}

bool Handle::isCompleted() const {
  return state().done();
}

bool Handle::wait(std::chrono::milliseconds timeout) const {
  // HandleState waits in nanoseconds: milliseconds::max() would overflow
  // there and return at once, so "practically forever" is capped first.
  constexpr std::chrono::milliseconds kLongest = std::chrono::hours(24 * 365 * 100);
  return state().wait_for(std::min(timeout, kLongest));
}

Status Handle::wait() const {
  state().wait();
  return state_->status();
}

Status Handle::status() const {
  if (finished() == nullptr) {
    throw Exception(
        Status(StatusCode::kInvalidArgument,
               "the operation is still running; wait for the handle before reading its status"));
  }
  return state_->status();
}

std::string Handle::error() const {
  const core::HandleState* s = finished();
  return s ? s->status().message() : std::string();
}

const void* Handle::data() const {
  const core::HandleState* s = finished();
  return s ? s->result().data.data() : nullptr;
}

size_t Handle::nbytes() const {
  const core::HandleState* s = finished();
  return s ? s->result().data.size() : 0;
}

const std::vector<int64_t>& Handle::shape() const {
  const core::HandleState* s = finished();
  return s ? s->result().shape : no_dims();
}

const std::vector<int64_t>& Handle::received_splits() const {
  const core::HandleState* s = finished();
  return s ? s->result().received_splits : no_dims();
}

int64_t Handle::value() const {
  const core::HandleState* s = finished();
  return s ? s->result().value : -1;
}

// --- Engine --------------------------------------------------------------

Engine::Engine(InitOptions options)
    : engine_(translated([&] {
        core::EngineOptions engine_options;
        engine_options.process_sets = std::move(options.process_sets);
        engine_options.mpi_comm.world_ranks = std::move(options.mpi_ranks);
        engine_options.mpi_comm.comm_address = options.mpi_comm;
        engine_options.survived_failure_report = std::move(options.survived_failure_report);
        return std::make_unique<core::Engine>(Config::FromEnv(), std::move(engine_options));
      })) {}

Engine::Engine(std::unique_ptr<core::Engine> engine) : engine_(std::move(engine)) {}
Engine::~Engine() = default;  // core::Engine's destructor shuts down
Engine::Engine(Engine&&) noexcept = default;
Engine& Engine::operator=(Engine&&) noexcept = default;

core::Engine& Engine::core_engine() const {
  if (!engine_)
    throw Exception(Status(StatusCode::kInvalidArgument, "this kolo::Engine was moved from"));
  return *engine_;
}

int Engine::rank() const {
  return core_engine().layout().rank;
}
int Engine::size() const {
  return core_engine().layout().size;
}
int Engine::local_rank() const {
  return core_engine().layout().local_rank;
}
int Engine::local_size() const {
  return core_engine().layout().local_size;
}
int Engine::cross_rank() const {
  return core_engine().layout().cross_rank;
}
int Engine::cross_size() const {
  return core_engine().layout().cross_size;
}
std::string Engine::backend_name() const {
  return std::string(core_engine().backend_name());
}

int64_t Engine::elastic_round() const {
  return core_engine().elastic_round();
}
int64_t Engine::elastic_hosts_seq() const {
  return core_engine().elastic_hosts_seq();
}
int Engine::elastic_newcomers() const {
  return core_engine().elastic_newcomers();
}
std::string Engine::standing_failure_report() const {
  return core_engine().standing_failure_report();
}
HostUpdates Engine::host_updates_since(int64_t acked) const {
  return translated([&] {
    const core::HostUpdates u = core_engine().host_updates_since(acked);
    return HostUpdates{u.seq, (u.changes & rendezvous::elastic::kHostsAdded) != 0,
                       (u.changes & rendezvous::elastic::kHostsRemoved) != 0};
  });
}

Handle Engine::allreduce(const Tensor& input, void* output, const ReduceOptions& options) {
  return allreduce(Tensor(input), output, ReduceOptions(options));
}

Handle Engine::allreduce(Tensor&& input, void* output, ReduceOptions&& options) {
  return translated([&] {
    return Handle(
        core_engine().allreduce(to_args(std::move(input), output, std::move(options.name)),
                                options.reduction(), options.process_set));
  });
}

std::vector<Handle> Engine::grouped_allreduce(const std::vector<Tensor>& inputs,
                                              const std::vector<void*>& outputs,
                                              const ReduceOptions& options) {
  return translated([&] {
    auto states = core_engine().grouped_allreduce(to_group(inputs, &outputs, options.name),
                                                  options.reduction(), options.process_set);
    return wrap_all(std::move(states), [](core::Handle h) { return Handle(std::move(h)); });
  });
}

Handle Engine::allgather(const Tensor& input, const AllgatherOptions& options) {
  return translated([&] {
    return Handle(
        core_engine().allgather(to_args(input, nullptr, options.name), options.process_set));
  });
}

std::vector<Handle> Engine::grouped_allgather(const std::vector<Tensor>& inputs,
                                              const AllgatherOptions& options) {
  return translated([&] {
    auto states = core_engine().grouped_allgather(to_group(inputs, nullptr, options.name),
                                                  options.process_set);
    return wrap_all(std::move(states), [](core::Handle h) { return Handle(std::move(h)); });
  });
}

Handle Engine::broadcast(const Tensor& input, void* output, const BroadcastOptions& options) {
  return translated([&] {
    return Handle(core_engine().broadcast(to_args(input, output, options.name), options.root,
                                          options.process_set));
  });
}

Handle Engine::alltoall(const Tensor& input, const AlltoallOptions& options) {
  return translated([&] {
    return Handle(core_engine().alltoall(to_args(input, nullptr, options.name), options.splits,
                                         options.process_set));
  });
}

Handle Engine::reducescatter(const Tensor& input, const ReduceOptions& options) {
  return translated([&] {
    return Handle(core_engine().reducescatter(to_args(input, nullptr, options.name),
                                              options.reduction(), options.process_set));
  });
}

std::vector<Handle> Engine::grouped_reducescatter(const std::vector<Tensor>& inputs,
                                                  const ReduceOptions& options) {
  return translated([&] {
    auto states = core_engine().grouped_reducescatter(to_group(inputs, nullptr, options.name),
                                                      options.reduction(), options.process_set);
    return wrap_all(std::move(states), [](core::Handle h) { return Handle(std::move(h)); });
  });
}

Handle Engine::barrier(int32_t process_set) {
  return translated([&] { return Handle(core_engine().barrier(process_set)); });
}

Handle Engine::join(int32_t process_set) {
  return translated([&] { return Handle(core_engine().join(process_set)); });
}

Handle Engine::add_process_set(std::vector<int> ranks) {
  return translated([&] { return Handle(core_engine().add_process_set(std::move(ranks))); });
}

Handle Engine::remove_process_set(int32_t id) {
  return translated([&] { return Handle(core_engine().remove_process_set(id)); });
}

void Engine::start_timeline(const std::string& path, bool mark_cycles) {
  translated([&] { core_engine().start_timeline(path, mark_cycles); });
}

void Engine::stop_timeline() {
  translated([&] { core_engine().stop_timeline(); });
}

void Engine::shutdown() {
  translated([&] { core_engine().shutdown(); });
}

std::shared_ptr<void> Engine::allocate_output(size_t bytes) {
  return translated([&] {
    // The block lives in the control block; the pointer handed out aliases
    // its memory, and the last copy's release returns it to the pool.
    auto block = std::make_shared<core::OutputBlock>(core_engine().outputs().acquire(bytes));
    return std::shared_ptr<void>(block, block->data());
  });
}

size_t Engine::cached_output_bytes() const {
  return core_engine().outputs().stats().cached_bytes;
}

// --- internal ------------------------------------------------------------

Engine internal::EngineAccess::create(const Config& config, core::EngineOptions options) {
  return translated(
      [&] { return Engine(std::make_unique<core::Engine>(config, std::move(options))); });
}

}  // namespace kolo
