// The public C++ API: one kolo::Engine per process (or per rank), handles in
// the shape of c10d's Work (isCompleted / wait(timeout) / error).
//
//   kolo::Engine engine;                       // joins the job KOLO_* describes
//   std::vector<float> grad(1024);
//   kolo::Tensor t{grad.data(), kolo::DataType::kFloat32, {1024}};
//   kolo::Handle h = engine.allreduce(t, grad.data(), {.name = "grad"});
//   if (!h.wait(std::chrono::seconds(30))) { /* still running */ }
//   else if (!h.status().ok()) std::cerr << h.error();
//
// Thread model: every Engine method may be called from any thread; handles
// complete on the engine's background thread. Errors a call can detect at
// once (bad arguments, unknown process set, a name already in flight) throw
// kolo::Exception; errors found during negotiation or execution (a mismatch
// with another rank, a lost peer) complete the handle with that Status.
//
// This header includes only include/kolo/ and the standard library: the
// engine's internals stay behind a pointer.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kolo/exception.h"
#include "kolo/status.h"
#include "kolo/types.h"

namespace kolo {

namespace core {
class Engine;
class HandleState;
}  // namespace core
namespace internal {
struct EngineAccess;
}  // namespace internal

// A view of caller-owned memory (dense, row-major); Kolo never copies the
// description's `data` before the operation runs, so it must stay valid
// until the handle completes.
struct Tensor {
  const void* data = nullptr;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape{};  // {} is a scalar
  int32_t device = kCpuDevice;
};

// Options of each operation (after c10d's Types.hpp). Every member has a
// default initializer so designated initializers may name any subset
// ({.op = ReduceOp::kSum}) without -Wmissing-field-initializers noise.
// `name` identifies the
// tensor across ranks; empty names match by call order. For grouped
// operations tensor i is named "<name>.<i>". `process_set` 0 is every rank.
struct ReduceOptions {  // allreduce, reducescatter
  ReduceOp op = ReduceOp::kAverage;
  double prescale = 1.0;   // applied to the input before reducing
  double postscale = 1.0;  // applied to the result (after average's 1/n)
  std::string name{};
  int32_t process_set = 0;

  // The fields above as the Reduction (kolo/types.h) every layer below
  // takes; the one conversion. They stay separate fields so that
  // ReduceOptions{.op = ..., .name = ...} keeps compiling.
  Reduction reduction() const { return {op, prescale, postscale}; }
};

struct AllgatherOptions {
  std::string name{};
  int32_t process_set = 0;
};

struct BroadcastOptions {
  int root = 0;  // rank within the process set
  std::string name{};
  int32_t process_set = 0;
};

struct AlltoallOptions {
  // Rows of the first dimension sent to each rank of the set; empty means
  // equal parts.
  std::vector<int64_t> splits{};
  std::string name{};
  int32_t process_set = 0;
};

struct InitOptions {
  // Process sets created at init with ids 1, 2, ... in this order; every
  // rank must pass the same list.
  std::vector<std::vector<int>> process_sets{};
  // Horovod's init(comm=...): the job is these ranks of MPI_COMM_WORLD (in
  // this order), or the MPI communicator whose MPI_Comm handle lives at
  // `mpi_comm` (mpi4py: MPI._addressof(comm)); either runs over the MPI
  // backend. A rank not in `mpi_ranks` gets kInvalidArgument.
  std::vector<int> mpi_ranks{};
  const void* mpi_comm = nullptr;
  // What the previous Engine of this process reported as the job's failure
  // and nothing withdrew (its standing_failure_report() after shutdown):
  // once the program submits to this Engine, it has gone on past that
  // failure, and kolorun's last line stops naming it.
  std::string survived_failure_report{};
};

// The completion of one operation. Copies share the same operation. A
// default-constructed Handle is empty; every method but valid() throws on it.
class Handle {
 public:
  Handle() = default;

  bool valid() const { return state_ != nullptr; }
  bool isCompleted() const;
  // True once the operation finished (successfully or not) within `timeout`;
  // false if it is still running.
  bool wait(std::chrono::milliseconds timeout) const;
  // Blocks until the operation finished and returns its status.
  Status wait() const;
  // The final status; throws Exception(kInvalidArgument) while the
  // operation is still running (check isCompleted() or wait first).
  Status status() const;
  // The error text; empty while running or after success.
  std::string error() const;

  // Outputs the engine allocated (allgather, alltoall, reducescatter): valid
  // after a successful completion for as long as any copy of this Handle
  // lives; empty (nullptr, 0, {}) before.
  const void* data() const;
  size_t nbytes() const;
  const std::vector<int64_t>& shape() const;
  // Alltoall: rows received from each rank of the set.
  const std::vector<int64_t>& received_splits() const;
  // Join: the last rank to join. add_process_set: the new set's id. -1 otherwise.
  int64_t value() const;

 private:
  friend class Engine;
  explicit Handle(std::shared_ptr<core::HandleState> state) : state_(std::move(state)) {}
  const core::HandleState& state() const;
  // Nullptr while the operation runs (its result is still being written).
  const core::HandleState* finished() const;

  std::shared_ptr<core::HandleState> state_;
};

// Host changes an elastic job's launcher announced (see Engine::host_updates_since).
struct HostUpdates {
  int64_t seq = 0;  // the newest announcement
  bool added = false;
  bool removed = false;
};

class Engine {
 public:
  // Joins the job the KOLO_* (or HOROVOD_*) environment describes; with none
  // set, a single process of size 1. Collective: every rank constructs its
  // Engine. Throws Exception (kInvalidArgument for bad settings, kTimeout
  // when peers do not show up).
  explicit Engine(InitOptions options = {});
  // Shuts down (collectively) if shutdown() was not called.
  ~Engine();
  Engine(Engine&&) noexcept;
  Engine& operator=(Engine&&) noexcept;
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  int rank() const;
  int size() const;
  int local_rank() const;
  int local_size() const;
  int cross_rank() const;
  int cross_size() const;
  // The backend of the job's global set: "tcp" (Kolo's own TCP and shared
  // memory) or "mpi".
  std::string backend_name() const;

  // Elastic jobs (kolorun --min-np/--max-np/--host-discovery-script): each
  // Engine joins one round; outside elastic mode the round is -1. Construction
  // throws kRemoved when the launcher left this worker out of the round.
  int64_t elastic_round() const;
  // The host announcement this round already includes.
  int64_t elastic_hosts_seq() const;
  // Members of this round that were in no earlier round (they need the
  // others' state).
  int elastic_newcomers() const;
  // The failure this Engine reported for kolorun's last line (a mismatch, a
  // stalled tensor) that the program has not gone on past; empty if none,
  // and empty before shutdown(). Hand it to the next Engine (InitOptions).
  std::string standing_failure_report() const;
  // What the launcher announced after `acked` (one store read when nothing
  // changed). Not collective: a binding makes all ranks agree (rank 0 reads,
  // then broadcasts).
  HostUpdates host_updates_since(int64_t acked) const;

  // `output` receives the result; it may equal input.data.
  Handle allreduce(const Tensor& input, void* output, const ReduceOptions& options = {});
  // The same, taking the shape and the name instead of copying them (a
  // binding's per-gradient call).
  Handle allreduce(Tensor&& input, void* output, ReduceOptions&& options);
  // outputs[i] receives inputs[i]'s result; the group negotiates and runs as one.
  std::vector<Handle> grouped_allreduce(const std::vector<Tensor>& inputs,
                                        const std::vector<void*>& outputs,
                                        const ReduceOptions& options = {});
  // Result (concatenated along the first dimension) in handle.data().
  Handle allgather(const Tensor& input, const AllgatherOptions& options = {});
  std::vector<Handle> grouped_allgather(const std::vector<Tensor>& inputs,
                                        const AllgatherOptions& options = {});
  // `output` receives the root's tensor (on the root too); may equal input.data.
  Handle broadcast(const Tensor& input, void* output, const BroadcastOptions& options = {});
  // Result in handle.data(), rows per sender in handle.received_splits().
  Handle alltoall(const Tensor& input, const AlltoallOptions& options = {});
  // This rank's rows of the reduced tensor in handle.data().
  Handle reducescatter(const Tensor& input, const ReduceOptions& options = {});
  std::vector<Handle> grouped_reducescatter(const std::vector<Tensor>& inputs,
                                            const ReduceOptions& options = {});
  Handle barrier(int32_t process_set = 0);
  // Completes when every rank of the set joined; value() is the last to join.
  Handle join(int32_t process_set = 0);
  // Collective over all ranks; value() is the new set's id.
  Handle add_process_set(std::vector<int> ranks);
  Handle remove_process_set(int32_t id);

  void start_timeline(const std::string& path, bool mark_cycles = false);
  void stop_timeline();

  // Memory for an out-of-place result (`bytes`, 64-byte aligned,
  // uninitialised) from the engine's output cache, which also holds the
  // outputs the engine allocates itself: an output freed earlier is handed
  // out again instead of fresh memory whose pages fault in on first write.
  // Valid while any copy of the pointer lives, also after shutdown; the
  // last copy gives it back. The cache keeps at most KOLO_OUTPUT_CACHE bytes
  // of freed outputs and empties at shutdown.
  std::shared_ptr<void> allocate_output(size_t bytes);
  // Bytes of freed outputs the cache holds now.
  size_t cached_output_bytes() const;

  // Collective: stops every rank at the same cycle and fails what is still
  // pending with kAborted. Idempotent; later operations complete at once
  // with kAborted.
  void shutdown();

 private:
  friend struct internal::EngineAccess;
  explicit Engine(std::unique_ptr<core::Engine> engine);
  core::Engine& core_engine() const;

  std::unique_ptr<core::Engine> engine_;
};

}  // namespace kolo
