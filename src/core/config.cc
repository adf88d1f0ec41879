#include "core/config.h"

#include <fmt/format.h>

#include "common/env.h"
#include "common/error.h"
#include "common/logging.h"
#include "transport/tcp/congestion.h"

namespace kolo {
namespace {

using std::chrono::milliseconds;

int read_int(std::initializer_list<const char*> names, int fallback, int min_value) {
  auto value = env::get_int(names);
  if (!value) return fallback;
  if (*value < min_value || *value > INT32_MAX)
    throw InvalidArgument(fmt::format("environment variable {}={} must be >= {}", *names.begin(),
                                      *value, min_value));
  return static_cast<int>(*value);
}

size_t read_size(std::initializer_list<const char*> names, size_t fallback) {
  auto text = env::get_string(names);
  if (!text) return fallback;
  auto bytes = env::parse_size(*text);
  if (!bytes)
    throw InvalidArgument(fmt::format("environment variable {}='{}' is not a size (e.g. 4096, 256K, 64M)",
                                      *names.begin(), *text));
  return *bytes;
}

milliseconds read_seconds(std::initializer_list<const char*> names, milliseconds fallback) {
  auto value = env::get_double(names);
  if (!value) return fallback;
  if (*value <= 0)
    throw InvalidArgument(fmt::format("environment variable {}={} must be a positive number of seconds",
                                      *names.begin(), *value));
  return milliseconds(static_cast<int64_t>(*value * 1000));
}

// A duration in seconds where 0 is allowed (it means "off").
milliseconds read_seconds_or_zero(std::initializer_list<const char*> names, milliseconds fallback) {
  auto value = env::get_double(names);
  if (!value) return fallback;
  if (*value < 0)
    throw InvalidArgument(fmt::format("environment variable {}={} must be 0 or a positive number of seconds",
                                      *names.begin(), *value));
  return milliseconds(static_cast<int64_t>(*value * 1000));
}

EngineSettings read_engine_settings() {
  EngineSettings e;
  e.fusion_threshold_bytes =
      read_size({"KOLO_FUSION_THRESHOLD", "HOROVOD_FUSION_THRESHOLD"}, e.fusion_threshold_bytes);
  if (auto ms = env::get_double({"KOLO_CYCLE_TIME", "HOROVOD_CYCLE_TIME"})) {
    if (*ms <= 0 || *ms > 10000)
      throw InvalidArgument(fmt::format(
          "environment variable KOLO_CYCLE_TIME={} must be in (0, 10000] milliseconds", *ms));
    e.cycle_time = std::chrono::microseconds(static_cast<int64_t>(*ms * 1000));
  }
  e.cache_capacity = static_cast<size_t>(
      read_int({"KOLO_CACHE_CAPACITY", "HOROVOD_CACHE_CAPACITY"}, static_cast<int>(e.cache_capacity), 0));
  if (e.cache_capacity > (size_t{1} << 20))
    throw InvalidArgument(fmt::format("KOLO_CACHE_CAPACITY={} is above the limit of 1048576",
                                      e.cache_capacity));
  e.timeline_path = env::get_string({"KOLO_TIMELINE", "HOROVOD_TIMELINE"}).value_or("");
  e.timeline_mark_cycles =
      env::get_bool({"KOLO_TIMELINE_MARK_CYCLES", "HOROVOD_TIMELINE_MARK_CYCLES"}).value_or(false);
  e.stall_check_enabled =
      !env::get_bool({"KOLO_STALL_CHECK_DISABLE", "HOROVOD_STALL_CHECK_DISABLE"}).value_or(false);
  e.stall_warning_time = read_seconds(
      {"KOLO_STALL_CHECK_TIME_SECONDS", "HOROVOD_STALL_CHECK_TIME_SECONDS"}, e.stall_warning_time);
  e.stall_shutdown_time = read_seconds_or_zero(
      {"KOLO_STALL_SHUTDOWN_TIME_SECONDS", "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS"}, e.stall_shutdown_time);
  if (e.stall_shutdown_time.count() > 0 && e.stall_shutdown_time < e.stall_warning_time)
    throw InvalidArgument(fmt::format(
        "KOLO_STALL_SHUTDOWN_TIME_SECONDS ({} s) must be 0 or at least KOLO_STALL_CHECK_TIME_SECONDS ({} s)",
        e.stall_shutdown_time.count() / 1000.0, e.stall_warning_time.count() / 1000.0));
  e.backend = env::get_string({"KOLO_BACKEND"}).value_or(e.backend);
  return e;
}

RankLayout read_layout() {
  RankLayout l;
  l.size = read_int({"KOLO_SIZE", "HOROVOD_SIZE"}, 1, 1);
  l.rank = read_int({"KOLO_RANK", "HOROVOD_RANK"}, 0, 0);
  l.local_size = read_int({"KOLO_LOCAL_SIZE", "HOROVOD_LOCAL_SIZE"}, l.size, 1);
  l.local_rank = read_int({"KOLO_LOCAL_RANK", "HOROVOD_LOCAL_RANK"}, l.rank, 0);
  l.cross_size = read_int({"KOLO_CROSS_SIZE", "HOROVOD_CROSS_SIZE"}, 1, 1);
  l.cross_rank = read_int({"KOLO_CROSS_RANK", "HOROVOD_CROSS_RANK"}, 0, 0);
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

collectives::AllreduceAlgorithm read_allreduce_algorithm() {
  auto name = env::get_string({"KOLO_ALLREDUCE_ALGORITHM"});
  if (!name || *name == "auto") return collectives::AllreduceAlgorithm::kAuto;
  if (*name == "recursive_doubling") return collectives::AllreduceAlgorithm::kRecursiveDoubling;
  if (*name == "ring") return collectives::AllreduceAlgorithm::kRing;
  throw InvalidArgument("KOLO_ALLREDUCE_ALGORITHM='" + *name +
                        "' is not one of auto, recursive_doubling, ring");
}

collectives::BroadcastAlgorithm read_broadcast_algorithm() {
  auto name = env::get_string({"KOLO_BROADCAST_ALGORITHM"});
  if (!name || *name == "auto") return collectives::BroadcastAlgorithm::kAuto;
  if (*name == "tree") return collectives::BroadcastAlgorithm::kTree;
  if (*name == "pipelined") return collectives::BroadcastAlgorithm::kPipelined;
  throw InvalidArgument("KOLO_BROADCAST_ALGORITHM='" + *name + "' is not one of auto, tree, pipelined");
}

collectives::HierarchicalMode read_hierarchical(std::initializer_list<const char*> names) {
  auto text = env::get_string(names);
  if (!text || *text == "auto") return collectives::HierarchicalMode::kAuto;
  if (*text == "1" || *text == "on" || *text == "true") return collectives::HierarchicalMode::kOn;
  if (*text == "0" || *text == "off" || *text == "false") return collectives::HierarchicalMode::kOff;
  throw InvalidArgument(fmt::format("{}='{}' is not one of auto, 1, 0", *names.begin(), *text));
}

transport::shm::SingleCopy read_single_copy() {
  auto text = env::get_string({"KOLO_SHM_SINGLE_COPY"});
  if (!text || *text == "auto") return transport::shm::SingleCopy::kAuto;
  if (*text == "1" || *text == "on" || *text == "true") return transport::shm::SingleCopy::kOn;
  if (*text == "0" || *text == "off" || *text == "false") return transport::shm::SingleCopy::kOff;
  throw InvalidArgument(fmt::format("KOLO_SHM_SINGLE_COPY='{}' is not one of auto, 1, 0", *text));
}

transport::shm::ShmOptions read_shm_options(const transport::tcp::TcpOptions& tcp) {
  transport::shm::ShmOptions shm;
  shm.enabled = env::get_bool({"KOLO_SHM"}).value_or(shm.enabled);
  shm.slot_bytes = read_size({"KOLO_SHM_SLOT_BYTES"}, shm.slot_bytes);
  if (shm.slot_bytes < 4096 || shm.slot_bytes > (size_t{1} << 30))
    throw InvalidArgument(fmt::format("KOLO_SHM_SLOT_BYTES={} must be between 4K and 1G", shm.slot_bytes));
  if (auto spin = env::get_int({"KOLO_SHM_SPIN_MICROSECONDS"})) {
    if (*spin < 0) throw InvalidArgument(fmt::format("KOLO_SHM_SPIN_MICROSECONDS={} is negative", *spin));
    shm.spin = std::chrono::microseconds(*spin);
  }
  shm.single_copy = read_single_copy();
  shm.single_copy_bytes = read_size({"KOLO_SHM_SINGLE_COPY_BYTES"}, shm.single_copy_bytes);
  shm.streaming_bytes = read_size({"KOLO_SHM_STREAMING_BYTES"}, shm.streaming_bytes);
  shm.op_timeout = tcp.op_timeout;
  return shm;
}

}  // namespace

Config Config::FromEnv() {
  Config c;
  c.layout = read_layout();

  auto& rv = c.rendezvous;
  rv.address = env::get_string({"KOLO_RENDEZVOUS_ADDR", "HOROVOD_GLOO_RENDEZVOUS_ADDR"}).value_or("");
  rv.port = read_int({"KOLO_RENDEZVOUS_PORT", "HOROVOD_GLOO_RENDEZVOUS_PORT"}, 0, 0);
  if (rv.port > 65535) throw InvalidArgument(fmt::format("KOLO_RENDEZVOUS_PORT={} is not a TCP port", rv.port));
  rv.secret = env::get_string({"KOLO_SECRET"}).value_or("");
  rv.prefix = env::get_string({"KOLO_RENDEZVOUS_PREFIX"}).value_or(rv.prefix);
  rv.timeout = read_seconds({"KOLO_START_TIMEOUT", "HOROVOD_START_TIMEOUT"}, rv.timeout);
  auto& el = c.elastic;
  el.enabled = env::get_bool({"KOLO_ELASTIC"}).value_or(false);
  el.worker_id = env::get_string({"KOLO_ELASTIC_WORKER"}).value_or("");
  el.join_timeout = read_seconds({"KOLO_ELASTIC_TIMEOUT"}, el.join_timeout);
  if (el.enabled && (rv.address.empty() || rv.port == 0 || el.worker_id.empty()))
    throw InvalidArgument(
        "KOLO_ELASTIC=1 needs KOLO_ELASTIC_WORKER, KOLO_RENDEZVOUS_ADDR and KOLO_RENDEZVOUS_PORT "
        "(kolorun's elastic mode sets them)");
  if (c.layout.size > 1 && (rv.address.empty() || rv.port == 0))
    throw InvalidArgument(fmt::format(
        "KOLO_SIZE={} needs a rendezvous server: set KOLO_RENDEZVOUS_ADDR and KOLO_RENDEZVOUS_PORT "
        "(kolorun and kolo-bench -np set them for you)",
        c.layout.size));
  if (c.layout.size > 1 && rv.secret.empty())
    throw InvalidArgument("KOLO_SECRET is not set: the rendezvous store requires the job's secret");

  auto& tcp = c.tcp;
  tcp.iface = env::get_string({"KOLO_IFACE", "HOROVOD_GLOO_IFACE"}).value_or("");
  tcp.address = env::get_string({"KOLO_ADDRESS"}).value_or("");
  tcp.route_hint = rv.address;
  tcp.connect_timeout = rv.timeout;
  tcp.op_timeout = read_seconds({"KOLO_TIMEOUT_SECONDS"}, tcp.op_timeout);
  tcp.peer_timeout = read_seconds({"KOLO_PEER_TIMEOUT_SECONDS"}, tcp.peer_timeout);
  tcp.socket_buffer_bytes = read_size({"KOLO_SOCKET_BUFFER_BYTES"}, tcp.socket_buffer_bytes);
  if (auto spin = env::get_int({"KOLO_SPIN_MICROSECONDS"})) {
    if (*spin < 0) throw InvalidArgument(fmt::format("KOLO_SPIN_MICROSECONDS={} is negative", *spin));
    tcp.spin = std::chrono::microseconds(*spin);
  }
  if (auto streams = env::get_int({"KOLO_TCP_STREAMS"})) {
    if (*streams < 1 || *streams > transport::tcp::TcpOptions::kMaxStreams)
      throw InvalidArgument(fmt::format("KOLO_TCP_STREAMS={} must be between 1 and {}", *streams,
                                        transport::tcp::TcpOptions::kMaxStreams));
    tcp.streams = static_cast<int>(*streams);
  }
  tcp.stripe_threshold = read_size({"KOLO_TCP_STRIPE_BYTES"}, tcp.stripe_threshold);
  if (auto congestion = env::get_string({"KOLO_TCP_CONGESTION"})) {
    transport::tcp::validate_congestion_setting(*congestion);
    tcp.congestion = *congestion;
  }

  auto& co = c.collectives;
  co.allreduce_algorithm = read_allreduce_algorithm();
  co.allreduce_ring_threshold = read_size({"KOLO_ALLREDUCE_RING_THRESHOLD"}, co.allreduce_ring_threshold);
  co.broadcast_algorithm = read_broadcast_algorithm();
  co.broadcast_pipeline_threshold =
      read_size({"KOLO_BROADCAST_PIPELINE_THRESHOLD"}, co.broadcast_pipeline_threshold);
  co.broadcast_chunk_bytes = read_size({"KOLO_BROADCAST_CHUNK_BYTES"}, co.broadcast_chunk_bytes);
  co.ring_chunk_bytes = read_size({"KOLO_RING_CHUNK_BYTES"}, co.ring_chunk_bytes);
  co.ring_min_chunk_bytes = read_size({"KOLO_RING_MIN_CHUNK_BYTES"}, co.ring_min_chunk_bytes);
  co.shm_small_bytes = read_size({"KOLO_SHM_SMALL_BYTES"}, co.shm_small_bytes);
  co.hierarchical_allreduce = read_hierarchical({"KOLO_HIERARCHICAL_ALLREDUCE", "HOROVOD_HIERARCHICAL_ALLREDUCE"});
  co.hierarchical_allgather = read_hierarchical({"KOLO_HIERARCHICAL_ALLGATHER", "HOROVOD_HIERARCHICAL_ALLGATHER"});
  c.shm = read_shm_options(tcp);
  if (co.broadcast_chunk_bytes == 0 || co.ring_chunk_bytes == 0)
    throw InvalidArgument("KOLO_BROADCAST_CHUNK_BYTES and KOLO_RING_CHUNK_BYTES must be above 0");

  c.engine = read_engine_settings();

  KOLO_LOG_DEBUG("effective configuration:\n{}", c.Describe());
  return c;
}

std::string Config::Describe() const {
  return fmt::format(
      "  rank={} size={} local_rank={} local_size={} cross_rank={} cross_size={}\n"
      "  rendezvous={}:{} prefix={} start_timeout={}ms secret={}\n"
      "  iface='{}' address='{}' op_timeout={}ms peer_timeout={}ms (heartbeat every {}ms) "
      "socket_buffer_bytes={} spin={}us streams={} stripe_threshold={} congestion={}\n"
      "  allreduce_algorithm={} allreduce_ring_threshold={} broadcast_algorithm={} "
      "broadcast_pipeline_threshold={} broadcast_chunk_bytes={} ring_chunk_bytes={} "
      "ring_min_chunk_bytes={}\n"
      "  shm={} shm_slot_bytes={} shm_spin={}us shm_small_bytes={} shm_single_copy={} "
      "shm_single_copy_bytes={} shm_streaming_bytes={} hierarchical_allreduce={} "
      "hierarchical_allgather={}\n"
      "  backend={} fusion_threshold={} cycle_time={}us cache_capacity={} timeline='{}' "
      "mark_cycles={} stall_check={} stall_warning={}ms stall_shutdown={}ms",
      layout.rank, layout.size, layout.local_rank, layout.local_size, layout.cross_rank,
      layout.cross_size, rendezvous.address, rendezvous.port, rendezvous.prefix,
      rendezvous.timeout.count(), rendezvous.secret.empty() ? "unset" : "set", tcp.iface,
      tcp.address, tcp.op_timeout.count(), tcp.peer_timeout.count(), tcp.heartbeat_interval().count(),
      tcp.socket_buffer_bytes, tcp.spin.count(), tcp.streams, tcp.stripe_threshold, tcp.congestion,
      static_cast<int>(collectives.allreduce_algorithm), collectives.allreduce_ring_threshold,
      static_cast<int>(collectives.broadcast_algorithm), collectives.broadcast_pipeline_threshold,
      collectives.broadcast_chunk_bytes, collectives.ring_chunk_bytes,
      collectives.ring_min_chunk_bytes, shm.enabled, shm.slot_bytes, shm.spin.count(),
      collectives.shm_small_bytes, static_cast<int>(shm.single_copy), shm.single_copy_bytes,
      shm.streaming_bytes, static_cast<int>(collectives.hierarchical_allreduce),
      static_cast<int>(collectives.hierarchical_allgather), engine.backend, engine.fusion_threshold_bytes,
      engine.cycle_time.count(), engine.cache_capacity, engine.timeline_path,
      engine.timeline_mark_cycles, engine.stall_check_enabled, engine.stall_warning_time.count(),
      engine.stall_shutdown_time.count());
}

}  // namespace kolo
