// The engine's side of autotuning (core/autotune/parameter_manager.h): rank
// 0 scores each cycle of the global process set and decides; its decision
// rides in the ResponseList of the next full negotiation (the global
// controller forces one), and every rank applies it after running that
// cycle's responses. The global set's negotiations happen in the same order
// on every rank, so all ranks switch after the same cycle and every later
// fusion, cycle pause, cache lookup and hierarchical choice agrees.
#include <fmt/format.h>

#include "common/logging.h"
#include "core/autotune/parameter_manager.h"
#include "core/engine.h"
#include "core/fusion.h"
#include "core/operation_table.h"

namespace kolo::core {
namespace {

bool hierarchical_setting_on(const std::string& value) {
  return value != "0";  // auto and 1 take the path where it exists
}

}  // namespace

void Engine::start_autotune() {
  const settings::Values& v = config_.settings;
  const bool hierarchical = global_backend_->has_hierarchical_path();
  tuned_.hierarchical_allreduce =
      hierarchical && hierarchical_setting_on(v.text("KOLO_HIERARCHICAL_ALLREDUCE"));
  tuned_.hierarchical_allgather =
      hierarchical && hierarchical_setting_on(v.text("KOLO_HIERARCHICAL_ALLGATHER"));
  if (!v.boolean("KOLO_AUTOTUNE") || config_.layout.rank != 0) return;

  autotune::AutotuneOptions options;
  options.warmup_samples = static_cast<int>(v.integer("KOLO_AUTOTUNE_WARMUP_SAMPLES"));
  options.steps_per_sample = static_cast<int>(v.integer("KOLO_AUTOTUNE_STEPS_PER_SAMPLE"));
  options.max_samples = static_cast<int>(v.integer("KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES"));
  options.noise = v.number("KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE");
  options.log_path = v.text("KOLO_AUTOTUNE_LOG");
  options.initial = tuned_;
  // What the user set stays as set (Horovod's rule); so does what cannot
  // matter here: a cache with no slots, a hierarchical path the job lacks.
  options.tune_fusion_threshold = !v.is_set("KOLO_FUSION_THRESHOLD");
  options.tune_cycle_time = !v.is_set("KOLO_CYCLE_TIME");
  options.tune_cache = !v.is_set("KOLO_CACHE_CAPACITY") && config_.engine.cache_capacity > 0;
  options.tune_hierarchical_allreduce = hierarchical && !v.is_set("KOLO_HIERARCHICAL_ALLREDUCE");
  options.tune_hierarchical_allgather = hierarchical && !v.is_set("KOLO_HIERARCHICAL_ALLGATHER");
  tuner_ = std::make_unique<autotune::ParameterManager>(options, std::chrono::steady_clock::now());
  // The starting settings go out with the first negotiation.
  MutexLock lock(mutex_);
  sets_.at(0)->controller->offer_tuning(autotune::encode_tuned_params(tuner_->current()));
}

void Engine::record_for_autotune(ProcessSet& global, const std::vector<Response>& ran) {
  std::vector<std::string> names;
  uint64_t bytes = 0;
  for (const Response& response : ran) {
    if (response.kind != Response::Kind::kRun || !operation_info(response.op).moves_data) continue;
    bytes += response_bytes(response);
    names.insert(names.end(), response.names.begin(), response.names.end());
  }
  if (names.empty()) return;
  if (auto next = tuner_->record(names, bytes, std::chrono::steady_clock::now()))
    global.controller->offer_tuning(autotune::encode_tuned_params(*next));
}

void Engine::apply_tuning(const std::string& encoded) {
  const autotune::TunedParams params = autotune::decode_tuned_params(encoded);
  tuned_ = params;
  pacer_->set_cycle_time(tuned_cycle_time());
  global_backend_->set_hierarchical(params.hierarchical_allreduce, params.hierarchical_allgather);
  std::vector<std::shared_ptr<ProcessSet>> members;
  {
    MutexLock lock(mutex_);
    applied_tunings_.push_back({global_cycles_, params});
    for (const auto& [id, set] : sets_)
      if (set->member()) members.push_back(set);
  }
  for (auto& set : members) set->controller->set_cache_enabled(params.cache_enabled);
  if (tuner_) tuner_->applied(std::chrono::steady_clock::now());
  KOLO_LOG_DEBUG("rank {}: autotune settings after cycle {}: {}", config_.layout.rank,
                 global_cycles_, autotune::describe(params));
}

std::vector<AppliedTuning> Engine::applied_tunings() const {
  MutexLock lock(mutex_);
  return applied_tunings_;
}

}  // namespace kolo::core
