#include "core/config.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/logging.h"

namespace kolo {
namespace {

using std::chrono::milliseconds;

// The layout as the launcher gives it; the local and cross values default to
// "one host holds the whole job".
RankLayout read_layout(const settings::Values& v) {
  RankLayout l;
  l.size = static_cast<int>(v.integer("KOLO_SIZE"));
  l.rank = static_cast<int>(v.integer("KOLO_RANK"));
  l.local_size =
      v.is_set("KOLO_LOCAL_SIZE") ? static_cast<int>(v.integer("KOLO_LOCAL_SIZE")) : l.size;
  l.local_rank =
      v.is_set("KOLO_LOCAL_RANK") ? static_cast<int>(v.integer("KOLO_LOCAL_RANK")) : l.rank;
  l.cross_size = static_cast<int>(v.integer("KOLO_CROSS_SIZE"));
  l.cross_rank = static_cast<int>(v.integer("KOLO_CROSS_RANK"));
  if (l.rank >= l.size)
    throw InvalidArgument(fmt::format("KOLO_RANK={} must be below KOLO_SIZE={}", l.rank, l.size));
  if (l.local_rank >= l.local_size)
    throw InvalidArgument(fmt::format("KOLO_LOCAL_RANK={} must be below KOLO_LOCAL_SIZE={}",
                                      l.local_rank, l.local_size));
  if (l.cross_rank >= l.cross_size)
    throw InvalidArgument(fmt::format("KOLO_CROSS_RANK={} must be below KOLO_CROSS_SIZE={}",
                                      l.cross_rank, l.cross_size));
  return l;
}

RendezvousConfig read_rendezvous(const settings::Values& v) {
  RendezvousConfig rv;
  rv.address = v.text("KOLO_RENDEZVOUS_ADDR");
  rv.port = static_cast<int>(v.integer("KOLO_RENDEZVOUS_PORT"));
  rv.secret = v.text("KOLO_SECRET");
  rv.prefix = v.text("KOLO_RENDEZVOUS_PREFIX");
  rv.timeout = v.duration<milliseconds>("KOLO_START_TIMEOUT");
  return rv;
}

ElasticConfig read_elastic(const settings::Values& v) {
  ElasticConfig el;
  el.enabled = v.boolean("KOLO_ELASTIC");
  el.worker_id = v.text("KOLO_ELASTIC_WORKER");
  el.join_timeout = v.duration<milliseconds>("KOLO_ELASTIC_TIMEOUT");
  return el;
}

EngineSettings read_engine_settings(const settings::Values& v) {
  EngineSettings e;
  e.fusion_threshold_bytes = v.bytes("KOLO_FUSION_THRESHOLD");
  e.cycle_time = v.duration<std::chrono::microseconds>("KOLO_CYCLE_TIME");
  e.cache_capacity = static_cast<size_t>(v.integer("KOLO_CACHE_CAPACITY"));
  e.timeline_path = v.text("KOLO_TIMELINE");
  e.timeline_mark_cycles = v.boolean("KOLO_TIMELINE_MARK_CYCLES");
  e.stall_check_enabled = !v.boolean("KOLO_STALL_CHECK_DISABLE");
  e.stall_warning_time = v.duration<milliseconds>("KOLO_STALL_CHECK_TIME_SECONDS");
  e.stall_shutdown_time = v.duration<milliseconds>("KOLO_STALL_SHUTDOWN_TIME_SECONDS");
  e.wedged_time = v.duration<milliseconds>("KOLO_ENGINE_WEDGED_SECONDS");
  e.test_wedge_time = v.duration<milliseconds>("KOLO_TEST_WEDGE_ENGINE_SECONDS");
  e.backend = v.text("KOLO_BACKEND");
  e.output_cache_bytes = v.bytes("KOLO_OUTPUT_CACHE");
  return e;
}

// What a job of several ranks needs from whoever started it. A foreign
// launcher's ranks without a store address make their own (foreign_store.h).
void check_launch(const Config& c) {
  const auto& rv = c.rendezvous;
  if (c.foreign_launcher && rv.address.empty()) return;
  if (c.elastic.enabled && (rv.address.empty() || rv.port == 0 || c.elastic.worker_id.empty()))
    throw InvalidArgument(
        "KOLO_ELASTIC=1 needs KOLO_ELASTIC_WORKER, KOLO_RENDEZVOUS_ADDR and KOLO_RENDEZVOUS_PORT "
        "(kolorun's elastic mode sets them)");
  // MPI connects the ranks itself (under mpirun); no store is needed.
  const bool mpi = c.engine.backend == "mpi";
  if (mpi && c.elastic.enabled)
    throw InvalidArgument("KOLO_BACKEND=mpi cannot run an elastic job (MPI's world is fixed)");
  if (mpi) return;
  if (c.layout.size > 1 && (rv.address.empty() || rv.port == 0))
    throw InvalidArgument(fmt::format(
        "KOLO_SIZE={} needs a rendezvous server: set KOLO_RENDEZVOUS_ADDR and KOLO_RENDEZVOUS_PORT "
        "(kolorun and kolo-bench -np set them for you)",
        c.layout.size));
  if (c.layout.size > 1 && rv.secret.empty())
    throw InvalidArgument("KOLO_SECRET is not set: the rendezvous store requires the job's secret");
}

}  // namespace

Config Config::FromEnv() {
  settings::Values values = settings::Values::Read();
  std::optional<launch::ForeignLauncher> launcher = launch::launcher_for(values);
  if (launcher) {
    values.set("KOLO_SIZE", std::to_string(launcher->size));
    values.set("KOLO_RANK", std::to_string(launcher->rank));
    if (launcher->local_size != 0) {
      values.set("KOLO_LOCAL_SIZE", std::to_string(launcher->local_size));
      values.set("KOLO_LOCAL_RANK", std::to_string(launcher->local_rank));
    }
    // Errors name hosts as the launcher does (kolorun sets KOLO_HOSTNAME).
    if (!launcher->node_name.empty() && !values.is_set("KOLO_HOSTNAME"))
      values.set("KOLO_HOSTNAME", launcher->node_name);
  }
  Config c = FromSettings(values, std::move(launcher));
  KOLO_LOG_DEBUG("effective configuration:\n{}", c.Describe());
  return c;
}

Config Config::FromSettings(const settings::Values& values,
                            std::optional<launch::ForeignLauncher> launcher) {
  Config c;
  c.settings = values;
  c.foreign_launcher = std::move(launcher);
  c.layout = read_layout(values);
  c.rendezvous = read_rendezvous(values);
  c.elastic = read_elastic(values);
  c.engine = read_engine_settings(values);
  check_launch(c);
  return c;
}

std::string Config::Describe() const {
  return fmt::format(
      "  rank={} size={} local_rank={} local_size={} cross_rank={} cross_size={} (from {})\n{}",
      layout.rank, layout.size, layout.local_rank, layout.local_size, layout.cross_rank,
      layout.cross_size, foreign_launcher ? foreign_launcher->name : "kolorun or KOLO_*",
      settings.Describe());
}

}  // namespace kolo
