#include "core/engine.h"

#include <fmt/format.h>

#include <algorithm>

#include "common/error.h"
#include "common/logging.h"
#include "core/autotune/parameter_manager.h"
#include "core/executor.h"
#include "core/operation_table.h"
#include "core/self_connected_world.h"
#include "core/world.h"
#include "rendezvous/elastic_protocol.h"
#include "rendezvous/failure_report.h"
#include "rendezvous/prefix_store.h"
#include "rendezvous/watched_store.h"

namespace kolo::core {

Engine::Engine(const Config& config, EngineOptions options)
    : config_(config),
      options_(std::move(options)),
      outputs_(std::make_shared<OutputPool>(config_.engine.output_cache_bytes)) {
  tuned_.fusion_threshold_mb =
      static_cast<double>(config_.engine.fusion_threshold_bytes) / (1024.0 * 1024.0);
  tuned_.cycle_time_ms = static_cast<double>(config_.engine.cycle_time.count()) / 1000.0;
  tuned_.cache_enabled = config_.engine.cache_capacity > 0;
  tuned_.active = false;
  pacer_ = std::make_shared<CyclePacer>(tuned_cycle_time());
  handle_links_ = std::make_shared<const HandleLinks>(HandleLinks{pacer_, progress_});
  connect(options_);
  start_autotune();
  if (!config_.engine.timeline_path.empty()) {
    try {
      start_timeline(config_.engine.timeline_path, config_.engine.timeline_mark_cycles);
    } catch (...) {
      // The program ends on it (init failed), and the other ranks then lose
      // this one; kolorun's last line should give this cause, not theirs.
      report_to_launcher(status_from_current_exception().message());
      throw;
    }
  }
  liveness_ = std::make_unique<EngineLiveness>(
      config_.engine.wedged_time, global_backend_->peer_name(config_.layout.rank),
      [this](const std::string& reason) {
        KOLO_LOG_ERROR("rank {}: {}", config_.layout.rank, reason);
        // The peers fail naming this rank and report it to kolorun; this
        // rank's own engine thread, stuck, may never get to.
        global_backend_->abort(reason);
      });
  if (!options_.survived_failure_report.empty()) {
    reported_error_ = options_.survived_failure_report;
    progress_->told_of_failure();  // the program knew: it left that engine over it
  }
  // The background thread starts last: a constructor that throws never runs
  // the destructor, and a joinable std::thread destroyed by the unwinding
  // terminates the process (SIGABRT instead of the error). Nothing that can
  // throw may follow this line.
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  shutdown();
}

void Engine::check_same_on_all_ranks(const std::vector<std::vector<int>>& sets) {
  // AND of (h, ~h) over ranks: every h is equal exactly when the AND of h
  // equals the complement of the AND of ~h (that is, the OR of h).
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](uint64_t v) { h = (h ^ v) * 1099511628211ull; };
  for (const auto& ranks : sets) {
    mix(ranks.size());
    for (int r : ranks) mix(static_cast<uint64_t>(r));
  }
  std::vector<uint64_t> words{h, ~h};
  global_backend_->allreduce_and(words);
  if (words[0] != ~words[1]) {
    throw InvalidArgument(
        "the process sets given to init differ between ranks; every rank must pass the same list");
  }
}

std::shared_ptr<ProcessSet> Engine::make_set(int32_t id, std::vector<int> ranks) {
  auto set = std::make_shared<ProcessSet>();
  set->id = id;
  set->ranks = std::move(ranks);
  auto it = std::find(set->ranks.begin(), set->ranks.end(), config_.layout.rank);
  if (it != set->ranks.end()) {
    set->set_rank = static_cast<int>(it - set->ranks.begin());
    if (id == 0) {
      set->backend = global_backend_.get();
    } else {
      set->owned_backend = global_backend_->subgroup(set->ranks, static_cast<uint32_t>(id));
      set->backend = set->owned_backend.get();
    }
    Controller::Settings settings;
    settings.cache_capacity = config_.engine.cache_capacity;
    settings.stall = {config_.engine.stall_check_enabled, config_.engine.stall_warning_time,
                      config_.engine.stall_shutdown_time};
    settings.on_stall_warning = options_.on_stall_warning;
    // Only rank 0 writes the timeline, so only the global set's coordinator
    // (on rank 0) ever finds it active; set ranks map back to global ranks.
    settings.on_rank_request = [this, ranks = set->ranks](const std::string& tensor, int set_rank,
                                                          std::chrono::microseconds age) {
      if (timeline_.active()) timeline_.negotiate_rank_ready(tensor, ranks.at(set_rank), age);
    };
    set->controller = std::make_unique<Controller>(*set->backend, settings);
    set->controller->set_cache_enabled(tuned_.cache_enabled);
  }
  return set;
}

std::vector<int32_t> Engine::process_set_ids() const {
  MutexLock lock(mutex_);
  std::vector<int32_t> ids;
  for (const auto& [id, set] : sets_) ids.push_back(id);
  return ids;
}

std::vector<int> Engine::process_set_ranks(int32_t id) const {
  MutexLock lock(mutex_);
  auto it = sets_.find(id);
  if (it == sets_.end()) throw InvalidArgument(fmt::format("process set {} does not exist", id));
  return it->second->ranks;
}

CacheStats Engine::cache_stats(int32_t process_set) const {
  MutexLock lock(mutex_);
  auto it = cache_stats_.find(process_set);
  if (it == cache_stats_.end())
    throw InvalidArgument(fmt::format("process set {} does not exist", process_set));
  return {it->second->hits.load(), it->second->misses.load()};
}

void Engine::start_timeline(const std::string& path, bool mark_cycles) {
  // As in Horovod, rank 0 writes the timeline: every rank gets the same
  // KOLO_TIMELINE, and one file per job is what users open.
  if (config_.layout.rank == 0) timeline_.start(path, mark_cycles);
}
void Engine::stop_timeline() {
  timeline_.stop();
}

Status Engine::health() const {
  MutexLock lock(mutex_);
  return failure_;
}

// --- background thread ---------------------------------------------------

void Engine::shutdown() {
  pacer_->request_shutdown();
  if (thread_.joinable()) thread_.join();
  timeline_.stop();
  outputs_->close();
}

void Engine::loop() {
  Clock::time_point next_cycle = Clock::now();
  int idle_cycles = 0;
  int unanswered_cycles = 0;
  try {
    while (true) {
      liveness_->waiting();
      pacer_->wait_for_cycle(next_cycle);
      liveness_->working();
      const Clock::time_point started = Clock::now();
      timeline_.mark_cycle_start();
      withdraw_survived_error();
      cycle_ran_ = false;
      cycle_left_waiting_ = false;
      if (!run_cycle()) break;
      idle_cycles = cycle_ran_ || cycle_left_waiting_ ? 0 : idle_cycles + 1;
      if (cycle_left_waiting_) {
        unanswered_cycles = cycle_ran_ ? 0 : unanswered_cycles + 1;
        next_cycle = started + pacer_->catch_up_pause(unanswered_cycles);
      } else {
        unanswered_cycles = 0;
        next_cycle = started + pacer_->idle_pause(idle_cycles);
      }
    }
    liveness_->waiting();  // done: whatever follows is not a cycle
    fail_everything(Status(StatusCode::kAborted, "Kolo has been shut down"), false);
  } catch (...) {
    liveness_->waiting();
    Status status = status_from_current_exception();
    KOLO_LOG_ERROR("rank {}: {}", config_.layout.rank, status.message());
    // Tell the peers why, so their errors name the root cause too.
    global_backend_->abort(status.message());
    fail_everything(status, true);
  }
  liveness_->waiting();  // the thread ends: a report's wait above marked it working
}

bool Engine::run_cycle() {
  std::shared_ptr<ProcessSet> global;
  const bool want_shutdown = pacer_->shutdown_requested();
  {
    MutexLock lock(mutex_);
    global = sets_.at(0);
  }
  if (run_set(*global, want_shutdown)) return false;
  // Taken after the global set ran: a set it added this cycle negotiates in
  // this cycle on every member alike.
  std::vector<std::shared_ptr<ProcessSet>> others;
  {
    MutexLock lock(mutex_);
    for (const auto& [id, set] : sets_) {
      if (id != 0 && set->member()) others.push_back(set);
    }
  }
  for (auto& set : others) run_set(*set, false);
  return true;
}

bool Engine::run_set(ProcessSet& set, bool want_shutdown) {
  std::vector<TensorEntry>& entries = set.taken;
  if (set.id == 0) {
    // Under mutex_, as enqueue() pushes and notes: the pacer then knows
    // exactly which enqueues this cycle took. The first set of the cycle
    // marks the take for all; an enqueue to another set before its own take
    // at worst starts the next cycle early, never late.
    MutexLock lock(mutex_);
    set.queue.take_all(entries);
    pacer_->note_queue_taken();
  } else {
    set.queue.take_all(entries);
  }
  if (timeline_.active()) {
    for (const auto& entry : entries) {
      timeline_.negotiate_start(entry.request.name, operation_info(entry.request.op).activity);
    }
  }
  CycleOutcome outcome;
  try {
    EngineLiveness::PeerWait waits(*liveness_);
    outcome = set.controller->negotiate(entries, want_shutdown);
  } catch (const Error& e) {
    std::string pending = set.controller->describe_pending();
    throw Error(e.code(), fmt::format("{} (during negotiation in process set {}{})", e.what(),
                                      set.id, pending.empty() ? "" : "; pending: " + pending));
  }
  publish_cache_stats(set);
  if (set.id == 0) ++global_cycles_;
  std::vector<Response> responses = fuse_responses(outcome.in_order(), fusion_threshold_bytes());
  if (!responses.empty() && log_threshold() <= LogLevel::kTrace) {
    size_t tensors = 0;
    for (const auto& r : responses) tensors += r.names.size();
    KOLO_LOG_TRACE("rank {} set {}: cycle runs {} tensors in {} collectives", config_.layout.rank,
                   set.id, tensors, responses.size());
  }
  if (timeline_.active()) {
    // QUEUE: from negotiation's end until the response's turn comes.
    for (const auto& response : responses) {
      for (const auto& name : response.names) {
        timeline_.negotiate_end(name);
        timeline_.op_start(name, operation_info(response.op).activity);
        timeline_.activity_start(name, "QUEUE");
      }
    }
  }
  for (const Response& response : responses) run_response(set, response, outcome.cacheable);
  // The tuner scores what ran under the settings it ran with; new settings
  // apply from the next cycle, on every rank after the same one.
  if (set.id == 0 && tuner_) record_for_autotune(set, responses);
  if (!outcome.tuning.empty()) apply_tuning(outcome.tuning);
  if (!responses.empty()) cycle_ran_ = true;
  if (set.controller->has_pending()) cycle_left_waiting_ = true;
  return outcome.shutdown;
}

void Engine::run_response(ProcessSet& set, const Response& response, bool cacheable) {
  std::vector<std::optional<TensorEntry>> entries;
  entries.reserve(response.names.size() + 1);  // + a refused join's entry
  for (const auto& name : response.names) {
    entries.push_back(
        set.controller->take_entry(response.op == OpType::kJoin ? "kolo.join" : name));
    if (timeline_.active()) timeline_.activity_end(name);
  }
  auto finish = [&](const Status& status) {
    if (timeline_.active()) {
      for (const auto& name : response.names) timeline_.op_end(name);
    }
    std::vector<HandleState*> handles;
    std::vector<const std::string*> names;
    handles.reserve(entries.size());
    names.reserve(entries.size());
    for (auto& entry : entries) {
      if (!entry) continue;
      names.push_back(&entry->request.name);
      handles.push_back(entry->handle.get());
    }
    set.queue.release(names);
    HandleState::complete_all(handles, status);
  };
  if (response.kind == Response::Kind::kError) {
    const bool refuses_my_join = std::find(response.values.begin(), response.values.end(),
                                           set.set_rank) != response.values.end();
    // A joined rank has no entry for the refused tensor; its pending join()
    // carries the error instead, or it would learn only "shut down" later.
    if (refuses_my_join) entries.push_back(set.controller->take_entry("kolo.join"));
    finish(Status(StatusCode::kInvalidArgument, response.error));
    // Every rank gets the same error; a program that ends on it then exits
    // non-zero, and kolorun's last line should say why, not only which rank
    // exited first. A program that catches the error and goes on has the
    // report withdrawn (withdraw_survived_error), so that a failure that
    // ends it later is the one named.
    if (!reported_error_) {
      reported_error_ = response.error;
      report_to_launcher(response.error);
    }
    return;
  }
  if (response.op == OpType::kJoin) {
    if (entries[0]) entries[0]->handle->result().value = response.values.at(0);
    finish(Status::Ok());
    return;
  }
  if (operation_info(response.op).changes_process_sets) {
    {
      EngineLiveness::PeerWait waits(*liveness_);
      run_set_change(response, entries[0] ? &*entries[0] : nullptr);
    }
    finish(Status::Ok());
    return;
  }
  try {
    EngineLiveness::PeerWait waits(*liveness_);
    Executor(fusion_buffers_, *outputs_, &timeline_).run(*set.backend, response, entries);
  } catch (...) {
    // These entries already left the controller: fail them here, or their
    // handles would never complete.
    finish(status_from_current_exception());
    throw;
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i] && cacheable && !entries[i]->response_cached)
      set.controller->remember(entries[i]->request, response, i);
  }
  finish(Status::Ok());
  if (config_.engine.test_wedge_time.count() > 0 && !test_wedged_) {
    // KOLO_TEST_WEDGE_ENGINE_SECONDS: stuck in the engine's own code, marked
    // working, so only its liveness watchdog can tell the peers.
    test_wedged_ = true;
    std::this_thread::sleep_for(config_.engine.test_wedge_time);
  }
}

void Engine::run_set_change(const Response& response, TensorEntry* entry) {
  if (response.op == OpType::kAddProcessSet) {
    int32_t id = next_set_id_++;
    std::vector<int> ranks(response.values.begin(), response.values.end());
    auto set = make_set(id, std::move(ranks));
    MutexLock lock(mutex_);
    sets_[id] = std::move(set);
    cache_stats_[id] = std::make_unique<SetCache>();
    if (entry) entry->handle->result().value = id;
    return;
  }
  auto id = static_cast<int32_t>(response.values.at(0));
  std::shared_ptr<ProcessSet> removed;
  {
    MutexLock lock(mutex_);
    auto it = sets_.find(id);
    if (it == sets_.end()) return;
    removed = it->second;
    sets_.erase(it);
  }
  Status status(StatusCode::kAborted, fmt::format("process set {} was removed", id));
  removed->queue.fail_all(status);
  if (removed->controller) removed->controller->fail_all(status);
  if (entry) entry->handle->result().value = id;
}

void Engine::publish_cache_stats(const ProcessSet& set) {
  MutexLock lock(mutex_);
  auto& stats = *cache_stats_.at(set.id);
  stats.hits = set.controller->cache().hits();
  stats.misses = set.controller->cache().misses();
}

void Engine::fail_everything(const Status& status, bool job_failed) {
  std::vector<std::shared_ptr<ProcessSet>> sets;
  bool first_failure = false;
  {
    MutexLock lock(mutex_);
    stopped_ = true;
    if (job_failed && failure_.ok()) {
      failure_ = status;
      first_failure = true;
    }
    for (const auto& [id, set] : sets_) sets.push_back(set);
  }
  for (auto& set : sets) {
    set->queue.fail_all(status);
    if (set->controller) set->controller->fail_all(status);
  }
  // For kolorun's last line, after the handles (a store that does not
  // answer must not delay the rank's own error).
  if (first_failure) report_to_launcher(status.message());
}

void Engine::report_to_launcher(const std::string& message) {
  // An elastic round's failures are the driver's to handle, not the job's end.
  if (elastic_round_ >= 0 || !store_) return;
  // A store round trip (its own timeouts bound it); only while the thread runs.
  std::optional<EngineLiveness::PeerWait> waits;
  if (liveness_) waits.emplace(*liveness_);
  rendezvous::report_failure(*store_, config_.rendezvous.prefix, config_.layout.rank, message);
}

std::string Engine::standing_failure_report() const {
  // reported_error_ belongs to the background thread; once it has been
  // joined (shutdown), the caller's thread may read it.
  if (thread_.joinable()) return "";
  return reported_error_.value_or("");
}

void Engine::withdraw_survived_error() {
  // Consumed every cycle, so that going on past an error nobody reported
  // (a removed process set) cannot withdraw a later one.
  const bool went_on = progress_->went_on_past_failure();
  if (!went_on || !reported_error_) return;
  // Every rank was given the error; the first of them to see its program go
  // on withdraws it. One store round trip per error survived.
  if (elastic_round_ < 0 && store_) {
    EngineLiveness::PeerWait waits(*liveness_);
    rendezvous::withdraw_failure(*store_, config_.rendezvous.prefix, *reported_error_);
  }
  reported_error_.reset();
}

}  // namespace kolo::core
