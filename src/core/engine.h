// Engine: Horovod's core semantics for one process. Framework threads
// enqueue named tensors in any order and get handles; one background thread
// negotiates with the other ranks what is ready everywhere (per process
// set), fuses small allreduces, runs the collectives and completes the
// handles. The layers a tensor passes through: docs/architecture.md.
//
// No global state: everything lives in the Engine, so init -> shutdown ->
// init works in one process (elastic training relies on it). Thread model:
// every public method may be called from any thread; the controllers, the
// response caches, the fusion buffers and the backends are touched only by
// the background thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "backends/registry.h"
#include "common/thread_annotations.h"
#include "core/autotune/tuned_params.h"
#include "core/config.h"
#include "core/cycle_pacer.h"
#include "core/elastic_worker.h"
#include "core/engine_liveness.h"
#include "core/fusion.h"
#include "core/handle_state.h"
#include "core/message.h"
#include "core/output_pool.h"
#include "core/process_set.h"
#include "core/program_progress.h"
#include "core/timeline.h"
#include "rendezvous/store.h"

namespace kolo::core {
namespace autotune {
class ParameterManager;  // autotune/parameter_manager.h (kept out: it pulls in Eigen)
}

using Handle = std::shared_ptr<HandleState>;

struct TensorArgs {
  std::string name;  // empty: matched with the other ranks by call order
  const void* input = nullptr;
  // Caller-owned output for allreduce and broadcast (may equal input);
  // ignored by allgather, alltoall and reducescatter, whose output the
  // engine allocates in the handle's result.
  void* output = nullptr;
  DataType dtype = DataType::kFloat32;
  std::vector<int64_t> shape;
  int32_t device = kCpuDevice;
};

struct EngineOptions {
  // Process sets created at init (ids 1, 2, ... in this order); every rank
  // must pass the same list.
  std::vector<std::vector<int>> process_sets;
  // Called on the coordinator with each stall warning, after it is logged.
  std::function<void(const std::string&)> on_stall_warning;
  // Tests: meet in this store instead of the one the config names.
  std::shared_ptr<rendezvous::Store> store;
  // init(comm=...): the job is this MPI communicator, over the MPI backend.
  backends::MpiCommunicator mpi_comm;
  // The failure an earlier engine of this process reported to the launcher
  // and nothing withdrew (standing_failure_report()). A program that starts
  // a new engine after a failure (kolo.elastic.run retrying) and submits to
  // it has gone on past that failure, so this engine withdraws the report
  // as it would one of its own.
  std::string survived_failure_report;
};

struct CacheStats {
  uint64_t hits = 0;
  uint64_t misses = 0;
};

// Settings the autotuner sent, as this rank applied them: after the global
// set's negotiation number `cycle` (counted from 1) and its responses.
struct AppliedTuning {
  uint64_t cycle = 0;
  autotune::TunedParams params;

  bool operator==(const AppliedTuning&) const = default;
};

class Engine {
 public:
  // Joins the job the config describes and starts the background thread.
  // Throws InvalidArgument for bad options, TimeoutError when peers do not
  // show up within the start timeout.
  explicit Engine(const Config& config, EngineOptions options = {});
  ~Engine();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  // Tells every rank to stop (they all stop at the same cycle, as in
  // Horovod: one rank's shutdown ends the job's collectives everywhere),
  // fails what is still pending and joins the background thread.
  // Idempotent.
  void shutdown() KOLO_EXCLUDES(mutex_);

  const RankLayout& layout() const { return config_.layout; }
  // The global set's backend ("tcp", "mpi"); fixed from construction on.
  std::string_view backend_name() const { return global_backend_->name(); }
  const Config& config() const { return config_; }

  // Elastic mode: the round this engine joined (-1 when not elastic) and
  // the host update it already includes.
  int64_t elastic_round() const { return elastic_round_; }
  // The negotiation error this engine reported to the launcher that the
  // program has not gone on past; empty if none, and empty until shutdown()
  // has stopped the background thread that owns it.
  std::string standing_failure_report() const;
  int64_t elastic_hosts_seq() const { return elastic_hosts_seq_; }
  int elastic_newcomers() const { return elastic_newcomers_; }
  // The host changes kolorun announced after `acked` (elastic mode only).
  HostUpdates host_updates_since(int64_t acked) const;

  // Enqueue: throw InvalidArgument for a call that can never work (bad
  // shape, unsupported op, unknown set, name already in flight). Once the
  // job has failed or shut down they return a handle already completed with
  // that status.
  Handle allreduce(TensorArgs tensor, Reduction reduce, int32_t process_set = 0);
  std::vector<Handle> grouped_allreduce(std::vector<TensorArgs> tensors, Reduction reduce,
                                        int32_t process_set = 0);
  Handle allgather(TensorArgs tensor, int32_t process_set = 0);
  std::vector<Handle> grouped_allgather(std::vector<TensorArgs> tensors, int32_t process_set = 0);
  Handle broadcast(TensorArgs tensor, int root, int32_t process_set = 0);
  // splits: rows of the first dimension for each rank; empty = equal parts.
  Handle alltoall(TensorArgs tensor, std::vector<int64_t> splits, int32_t process_set = 0);
  Handle reducescatter(TensorArgs tensor, Reduction reduce, int32_t process_set = 0);
  std::vector<Handle> grouped_reducescatter(std::vector<TensorArgs> tensors, Reduction reduce,
                                            int32_t process_set = 0);
  Handle barrier(int32_t process_set = 0);
  // Completes when every rank of the set has joined; result().value is the
  // last rank to join.
  Handle join(int32_t process_set = 0);
  // Collective over all ranks; result().value is the new set's id.
  Handle add_process_set(std::vector<int> ranks);
  Handle remove_process_set(int32_t id);

  std::vector<int32_t> process_set_ids() const KOLO_EXCLUDES(mutex_);
  // Throws InvalidArgument for an unknown id.
  std::vector<int> process_set_ranks(int32_t id) const KOLO_EXCLUDES(mutex_);

  CacheStats cache_stats(int32_t process_set = 0) const KOLO_EXCLUDES(mutex_);

  // Rank 0 writes the job's timeline; on other ranks these do nothing.
  void start_timeline(const std::string& path, bool mark_cycles);
  void stop_timeline();

  // Every autotune setting this rank applied, oldest first (empty without
  // KOLO_AUTOTUNE). Every rank's list is the same.
  std::vector<AppliedTuning> applied_tunings() const KOLO_EXCLUDES(mutex_);

  // Ok while running; the root cause once the job failed.
  Status health() const KOLO_EXCLUDES(mutex_);

  // The cache every output this engine allocates comes from; bindings take
  // out-of-place outputs from it too. Closed (emptied) at shutdown.
  OutputPool& outputs() const { return *outputs_; }

 private:
  struct SetCache {
    std::atomic<uint64_t> hits{0};
    std::atomic<uint64_t> misses{0};
  };

  void connect(EngineOptions& options) KOLO_EXCLUDES(mutex_);
  void connect_through_store(EngineOptions& options);
  void join_elastic_round();
  void check_same_on_all_ranks(const std::vector<std::vector<int>>& sets);
  std::shared_ptr<ProcessSet> make_set(int32_t id, std::vector<int> ranks);
  using Clock = std::chrono::steady_clock;
  // One call's tensors (a group when more than one) join the set's queue;
  // their handles, in call order.
  std::vector<Handle> enqueue(OpType op, std::vector<TensorArgs> tensors, const Request& base,
                              int32_t process_set) KOLO_EXCLUDES(mutex_);
  // enqueue() of the single tensor most calls carry, without its vectors: a
  // backward pass makes one such call per gradient.
  Handle enqueue_one(OpType op, TensorArgs tensor, const Request& base, int32_t process_set)
      KOLO_EXCLUDES(mutex_);
  // The entry of one tensor of a call, validated (throws InvalidArgument),
  // with a new handle; a group's fields are the caller's to set.
  TensorEntry make_entry(OpType op, TensorArgs& tensor, const Request& base, ProcessSet& set,
                         Clock::time_point enqueued) KOLO_REQUIRES(mutex_);
  // What a call after shutdown or failure completes its handles with.
  Status stopped_status() const KOLO_REQUIRES(mutex_);
  // Hands a call's entries (one TensorEntry or a group's vector) to the
  // set's queue and tells the program's progress and the pacer; true when
  // the background thread must be woken, which the caller does after
  // unlocking. Under mutex_, as the cycle's take of the queue is (run_set),
  // so the pacer knows whether a cycle took these entries; only the first
  // enqueue since the last take wakes the thread (it may be in a long idle
  // pause).
  template <class Entries>
  bool queue_up(ProcessSet& set, Entries entries, Clock::time_point enqueued)
      KOLO_REQUIRES(mutex_) {
    set.queue.push(std::move(entries));
    progress_->submitted();
    return pacer_->note_enqueue(enqueued);
  }
  // The set is held by sets_, which only changes under mutex_.
  ProcessSet& member_set(int32_t id) const KOLO_REQUIRES(mutex_);
  std::chrono::microseconds tuned_cycle_time() const {
    return std::chrono::microseconds(static_cast<int64_t>(tuned_.cycle_time_ms * 1000.0));
  }
  size_t fusion_threshold_bytes() const {
    return static_cast<size_t>(tuned_.fusion_threshold_mb * 1024.0 * 1024.0);
  }
  void loop();
  bool run_cycle() KOLO_EXCLUDES(mutex_);
  bool run_set(ProcessSet& set, bool want_shutdown);
  void run_response(ProcessSet& set, const Response& response, bool cacheable);
  void run_set_change(const Response& response, TensorEntry* entry) KOLO_EXCLUDES(mutex_);
  void fail_everything(const Status& status, bool job_failed) KOLO_EXCLUDES(mutex_);
  void publish_cache_stats(const ProcessSet& set) KOLO_EXCLUDES(mutex_);
  // Leaves `message` for kolorun's last line (rendezvous/failure_report.h);
  // the store keeps the first report of the job.
  void report_to_launcher(const std::string& message);
  // Withdraws the negotiation error this rank reported once the program has
  // gone on past it (core/program_progress.h).
  void withdraw_survived_error();
  // Autotune (engine_autotune.cc).
  void start_autotune();
  void record_for_autotune(ProcessSet& global, const std::vector<Response>& ran);
  void apply_tuning(const std::string& encoded) KOLO_EXCLUDES(mutex_);

  Config config_;  // elastic mode: the layout and key prefix of the round joined
  EngineOptions options_;
  int64_t elastic_round_ = -1;
  int64_t elastic_hosts_seq_ = 0;
  int elastic_newcomers_ = 0;
  std::shared_ptr<rendezvous::Store> store_;
  std::unique_ptr<backends::Backend> global_backend_;
  FusionBuffers fusion_buffers_;
  // Shared with the blocks it hands out, which may outlive the engine.
  std::shared_ptr<OutputPool> outputs_;
  Timeline timeline_;

  // When cycles start; shared with the handles, which may outlive the engine.
  std::shared_ptr<CyclePacer> pacer_;
  std::shared_ptr<const HandleLinks> handle_links_;  // given to every handle
  // Also guards every ProcessSet's unnamed_counters (see enqueue).
  mutable Mutex mutex_;
  std::map<int32_t, std::shared_ptr<ProcessSet>> sets_ KOLO_GUARDED_BY(mutex_);
  std::map<int32_t, std::unique_ptr<SetCache>> cache_stats_ KOLO_GUARDED_BY(mutex_);
  int32_t next_set_id_ = 1;                       // background thread
  bool stopped_ KOLO_GUARDED_BY(mutex_) = false;  // no more enqueues
  // The settings the autotuner changes, as in effect on this rank; the
  // background thread alone uses them after construction.
  autotune::TunedParams tuned_;
  std::unique_ptr<autotune::ParameterManager> tuner_;  // rank 0, with KOLO_AUTOTUNE
  uint64_t global_cycles_ = 0;  // background thread: negotiations of the global set
  std::vector<AppliedTuning> applied_tunings_ KOLO_GUARDED_BY(mutex_);
  bool cycle_ran_ = false;           // background thread only: this cycle ran a response
  bool cycle_left_waiting_ = false;  // background thread only: entries still wait after it
  bool test_wedged_ = false;         // background thread only: KOLO_TEST_WEDGE_ENGINE_SECONDS
  // Background thread only: the negotiation error (a mismatch, a stalled
  // tensor) reported to the launcher; later ones are not, until the program
  // goes on past it and the report is withdrawn.
  std::optional<std::string> reported_error_;
  // Shared with the handles, which tell it when the program learns of a
  // failure; enqueue tells it when the program submits again.
  const std::shared_ptr<ProgramProgress> progress_ = std::make_shared<ProgramProgress>();
  Status failure_ KOLO_GUARDED_BY(mutex_);
  // Watches the background thread (engine_liveness.h); after
  // global_backend_, so it stops before the backend it aborts goes.
  std::unique_ptr<EngineLiveness> liveness_;
  // Started as the constructor's last statement (see Engine::Engine).
  std::thread thread_;
};

}  // namespace kolo::core
