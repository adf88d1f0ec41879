// Every KOLO_* setting, declared once. Adding a setting is one entry here;
// everything else (parsing and checking, Config::Describe(), kolorun's
// flags, --config-file keys, docs/config.md) is derived from it. The layer
// that uses a setting reads it from settings::Values by name, checked at
// compile time (settings/values.h).
//
// Sections appear in docs/config.md in the order of their first entry.
#pragma once

#include <string_view>

#include "common/settings/spec.h"

namespace kolo::settings {

using Form = FlagSpec::Form;

inline constexpr double kIntMax = 2147483647.0;
inline constexpr Range kNonNegative{0, kIntMax};
inline constexpr Range kPositive{1, kIntMax};
inline constexpr Range kAboveZero{0, Range{}.max, true};
inline constexpr Range kZeroOrMore{0};
inline constexpr std::string_view kTriState = "auto|1,on,true|0,off,false";

inline constexpr std::string_view kLayout = "Rank layout (set by the launcher)";
inline constexpr std::string_view kRendezvous = "Rendezvous";
inline constexpr std::string_view kTcp = "TCP transport";
inline constexpr std::string_view kShm = "Shared memory";
inline constexpr std::string_view kAlgorithms = "Collective algorithms";
inline constexpr std::string_view kKernels = "Reduction kernels";
inline constexpr std::string_view kEngine = "Engine";
inline constexpr std::string_view kAutotune = "Autotune";
inline constexpr std::string_view kLogging = "Logging";
inline constexpr std::string_view kElastic = "Elastic mode (set by kolorun)";
inline constexpr std::string_view kRun = "Set by kolo.run";

// Entries name only the fields they need; the rest keep Spec's defaults. GCC
// 12 warns about every omitted field of a designated initializer even when
// it has a default (fixed in GCC 13), so that warning is off for the table.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
inline constexpr Spec kTable[] = {
    // Rank layout.
    {.name = "KOLO_RANK",
     .alias = "HOROVOD_RANK",
     .kind = Kind::kInt,
     .fallback = "0",
     .range = kNonNegative,
     .section = kLayout,
     .description = "this process's rank"},
    {.name = "KOLO_SIZE",
     .alias = "HOROVOD_SIZE",
     .kind = Kind::kInt,
     .fallback = "1",
     .range = kPositive,
     .section = kLayout,
     .description = "number of ranks"},
    {.name = "KOLO_LOCAL_RANK",
     .alias = "HOROVOD_LOCAL_RANK",
     .kind = Kind::kInt,
     .range = kNonNegative,
     .section = kLayout,
     .description = "rank among the ranks on this host",
     .default_doc = "= rank"},
    {.name = "KOLO_LOCAL_SIZE",
     .alias = "HOROVOD_LOCAL_SIZE",
     .kind = Kind::kInt,
     .range = kPositive,
     .section = kLayout,
     .description = "ranks on this host",
     .default_doc = "= size"},
    {.name = "KOLO_CROSS_RANK",
     .alias = "HOROVOD_CROSS_RANK",
     .kind = Kind::kInt,
     .fallback = "0",
     .range = kNonNegative,
     .section = kLayout,
     .description = "index of this host"},
    {.name = "KOLO_CROSS_SIZE",
     .alias = "HOROVOD_CROSS_SIZE",
     .kind = Kind::kInt,
     .fallback = "1",
     .range = kPositive,
     .section = kLayout,
     .description = "number of hosts"},
    {.name = "KOLO_HOSTNAME",
     .alias = "HOROVOD_HOSTNAME",
     .kind = Kind::kString,
     .section = kLayout,
     .description = "the rank's host as written in `-H` or the hostfile; errors name peers "
                    "by it",
     .default_doc = "(set by kolorun; under mpirun or srun the launcher's name for the node; else "
                    "the machine's hostname)"},

    // Rendezvous.
    {.name = "KOLO_RENDEZVOUS_ADDR",
     .alias = "HOROVOD_GLOO_RENDEZVOUS_ADDR",
     .kind = Kind::kString,
     .section = kRendezvous,
     .description = "host of the store server",
     .default_doc = "(none; required when size > 1)"},
    {.name = "KOLO_RENDEZVOUS_PORT",
     .alias = "HOROVOD_GLOO_RENDEZVOUS_PORT",
     .kind = Kind::kInt,
     .fallback = "0",
     .range = {0, 65535},
     .section = kRendezvous,
     .description = "its TCP port",
     .default_doc = "(none; required when size > 1)"},
    {.name = "KOLO_SECRET",
     .kind = Kind::kString,
     .section = kRendezvous,
     .description = "per-job secret; every store request carries an HMAC-SHA256 made with it",
     .default_doc = "(none: kolorun and kolo.run make one per job; rank 0 makes one under "
                    "mpirun, srun or torchrun on one host, and under mpirun across hosts where "
                    "the MPI plugin loads; the user gives one elsewhere across hosts)",
     .secret = true},
    {.name = "KOLO_RENDEZVOUS_PREFIX",
     .kind = Kind::kString,
     .fallback = "kolo",
     .section = kRendezvous,
     .description = "scope of this job's keys in the store"},
    {.name = "KOLO_RENDEZVOUS_DIR",
     .kind = Kind::kString,
     .fallback = "/tmp",
     .section = kRendezvous,
     .description = "under mpirun, srun or torchrun on one host: where rank 0 leaves the address "
                    "of its store for the others (in a kolo-UID directory only the user can "
                    "enter)"},
    {.name = "KOLO_START_TIMEOUT",
     .alias = "HOROVOD_START_TIMEOUT",
     .kind = Kind::kSeconds,
     .fallback = "60",
     .range = kAboveZero,
     .section = kRendezvous,
     .description = "how long to wait for the store and for every peer while connecting "
                    "(kolorun also gives ssh this long to connect)",
     .flag = {.form = Form::kValue, .names = "--start-timeout", .value_name = "SECONDS"}},

    // TCP transport.
    {.name = "KOLO_IFACE",
     .alias = "HOROVOD_GLOO_IFACE",
     .kind = Kind::kString,
     .section = kTcp,
     .description = "network interface to listen on and publish",
     .flag = {.form = Form::kFirstOfList,
              .names = "--network-interface,--network-interfaces",
              .value_name = "IF[,IF...]"},
     .default_doc = "(auto)"},
    {.name = "KOLO_ADDRESS",
     .kind = Kind::kString,
     .section = kTcp,
     .description = "explicit IPv4 address to listen on and publish",
     .default_doc = "(auto)"},
    {.name = "KOLO_TIMEOUT_SECONDS",
     .alias = "HOROVOD_GLOO_TIMEOUT_SECONDS",
     .kind = Kind::kSeconds,
     .fallback = "300",
     .range = kAboveZero,
     .section = kTcp,
     .description = "longest wait for one send or receive before it fails naming the peer "
                    "(horovodrun's Gloo operation timeout)",
     .flag = {.form = Form::kValue,
              .names = "--gloo-timeout-seconds",
              .value_name = "SECONDS",
              .config_key = "library_options.gloo_timeout_seconds"}},
    {.name = "KOLO_PEER_TIMEOUT_SECONDS",
     .kind = Kind::kSeconds,
     .fallback = "6",
     .range = kAboveZero,
     .section = kTcp,
     .description =
         "liveness: a peer from which nothing, not even a heartbeat, has arrived for this long "
         "is declared lost (\"rank 1 (host b) stopped answering: nothing received for 6.0 s\"), "
         "failing every rank with its name. Heartbeats come from each rank's transport thread, "
         "not from the program or its collectives, so a rank busy between collectives (Python "
         "holding the GIL included) keeps beating and only a frozen (SIGSTOP), wedged or "
         "unreachable process is ever this quiet. Keep it below `KOLO_TIMEOUT_SECONDS`, so the "
         "stopped rank is blamed rather than a healthy rank waiting on it. A stall shutdown "
         "time (`KOLO_STALL_SHUTDOWN_TIME_SECONDS`) shorter than this takes its place"},
    {.name = "KOLO_HEARTBEAT_INTERVAL",
     .kind = Kind::kMillis,
     .fallback = "500",
     .range = {1, 60000},
     .section = kTcp,
     .description =
         "liveness: each rank's transport thread sends a heartbeat on every connection that "
         "has carried nothing for this long (and checks its peers' silence four times as "
         "often); cut to a third of `KOLO_PEER_TIMEOUT_SECONDS` when longer, so a few late "
         "beats on a loaded host are never taken for a lost peer. A beat is a 32-byte frame"},
    {.name = "KOLO_SOCKET_BUFFER_BYTES",
     .kind = Kind::kSize,
     .fallback = "4M",
     .range = kZeroOrMore,
     .section = kTcp,
     .description = "SO_SNDBUF/SO_RCVBUF of data connections; 0 keeps the kernel's autotuning"},
    {.name = "KOLO_SPIN_MICROSECONDS",
     .kind = Kind::kInt,
     .fallback = "50",
     .range = kNonNegative,
     .section = kTcp,
     .description = "a caller waiting for a message of up to 64 KiB polls for up to this long "
                    "(yielding its core between polls) before it sleeps; saves a wake-up (~30 "
                    "µs on an idle VM) per message when the peer answers within that time; 0 "
                    "always sleeps"},
    {.name = "KOLO_TCP_STREAMS",
     .kind = Kind::kInt,
     .fallback = "1",
     .range = {1, 16},
     .section = kTcp,
     .description =
         "TCP connections per peer, 1 to 16. With more than one, every rank builds that many "
         "independent meshes (each with its own sockets and progress thread) and cuts each "
         "message of at least `KOLO_TCP_STRIPE_BYTES` into one contiguous part per connection "
         "(parts of at least 128 KiB, so mid sizes use fewer); smaller messages use the first "
         "connection only. Meant for fast links between hosts, where one connection's window "
         "or one core's copies limit the rate; on a 2-core host it did not help, on loopback "
         "or over veth. Every rank must use the same value (checked at connect)"},
    {.name = "KOLO_TCP_CONGESTION",
     .kind = Kind::kName,
     .fallback = "auto",
     .range = {1, 15},
     .section = kTcp,
     .description =
         "TCP congestion control of the data connections. `auto`: a connection between two "
         "ranks of the same host (both ends on one address) uses cubic (reno where the kernel "
         "does not permit cubic), because a pacing default such as BBR paces loopback too and "
         "halved the 4-32 MB allreduce over loopback TCP on this project's VMs; connections "
         "between hosts keep the host's default (`net.ipv4.tcp_congestion_control`). "
         "`system`: every connection keeps the host's default. Any other value: that "
         "algorithm for every connection; a name the kernel refuses (not loaded, or not in "
         "`net.ipv4.tcp_allowed_congestion_control` for a process without CAP_NET_ADMIN) "
         "fails at start-up with what the host offers"},
    {.name = "KOLO_TCP_STRIPE_BYTES",
     .kind = Kind::kSize,
     .fallback = "256K",
     .range = kZeroOrMore,
     .section = kTcp,
     .description = "with `KOLO_TCP_STREAMS` > 1: the smallest message cut across the "
                    "connections; must match on every rank. Keep it at or below "
                    "`KOLO_RING_CHUNK_BYTES`, or the ring allreduce (which sends chunks of at "
                    "most that size) never stripes"},

    // Shared memory.
    {.name = "KOLO_SHM",
     .kind = Kind::kBool,
     .fallback = "1",
     .section = kShm,
     .description = "0 turns shared memory off: ranks on one host talk over TCP (loopback). "
                    "`KOLO_BACKEND=tcp` does the same"},
    {.name = "KOLO_SHM_SLOT_BYTES",
     .kind = Kind::kSize,
     .fallback = "1M",
     .range = {4096, 1073741824},
     .section = kShm,
     .description = "each local rank's staging buffer (it has two); the segment is 2 × this × "
                    "local ranks, plus a page per 32 ranks for the header. 4K to 1G"},
    {.name = "KOLO_SHM_SPIN_MICROSECONDS",
     .kind = Kind::kInt,
     .fallback = "200",
     .range = kNonNegative,
     .section = kShm,
     .description = "a rank waiting for a local peer polls this long (yielding its core when "
                    "ranks outnumber cores) before it sleeps on a futex"},
    {.name = "KOLO_SHM_SMALL_BYTES",
     .kind = Kind::kSize,
     .fallback = "64K",
     .range = kZeroOrMore,
     .section = kShm,
     .description = "allreduces up to this size (and at most the slot) take the one-phase "
                    "path: every rank publishes its whole input and reduces all of them "
                    "itself; larger ones are reduced shard by shard"},
    {.name = "KOLO_SHM_SINGLE_COPY",
     .kind = Kind::kChoice,
     .fallback = "auto",
     .choices = kTriState,
     .section = kShm,
     .description =
         "allgathers, broadcasts and alltoall blocks of `KOLO_SHM_SINGLE_COPY_BYTES` and more "
         "read the other local ranks' buffers directly (Linux cross-memory attach, "
         "`process_vm_readv`): one copy instead of two through the segment. Set-up probes "
         "whether the kernel allows it between the host's ranks (same user, one pid namespace, "
         "no Yama or seccomp rule against it). `auto`: used when the probe passes, for "
         "allgather and broadcast only where the host's ranks do not outnumber its cores (with "
         "more ranks than cores the segment was faster for them, but not for alltoall); `1`: "
         "whenever the probe passes; `0`: never. When it is wanted but not used, the host's "
         "first rank says so at info level"},
    {.name = "KOLO_SHM_SINGLE_COPY_BYTES",
     .kind = Kind::kSize,
     .fallback = "32K",
     .range = kZeroOrMore,
     .section = kShm,
     .description =
         "the size from which those reads are used: each rank's block (allgather), each block "
         "between two ranks (alltoall) or the message (broadcast, which uses them only up to "
         "`KOLO_SHM_SLOT_BYTES`: larger ones are pipelined through the segment, the root "
         "copying in while the others copy out). Smaller ones go through the segment, where "
         "one phase is cheaper than the system calls"},
    {.name = "KOLO_SHM_STREAMING_BYTES",
     .kind = Kind::kSize,
     .fallback = "16M",
     .range = kZeroOrMore,
     .section = kShm,
     .description =
         "allreduces (and fused allreduces) of this many bytes and more write their outputs "
         "with non-temporal stores, which skip reading each destination line but leave nothing "
         "in the cache; smaller ones use ordinary stores. The best switch point depends on the "
         "host's caches: on the 2-core test VM 8 MB gained about 10% with ordinary stores, 16 "
         "MB was level and 32-64 MB lost 15%"},
    {.name = "KOLO_HIERARCHICAL_ALLREDUCE",
     .alias = "HOROVOD_HIERARCHICAL_ALLREDUCE",
     .kind = Kind::kChoice,
     .fallback = "auto",
     .choices = kTriState,
     .section = kShm,
     .description = "`auto` (or 1): across hosts with the same number of ranks (at least 2) "
                    "each, reduce-scatter within the host, ring across hosts per shard, "
                    "allgather within the host; 0: flat TCP algorithms",
     .flag = {.form = Form::kSwitch,
              .names = "--hierarchical-allreduce",
              .config_key = "params.hierarchical_allreduce",
              .off_names = "--no-hierarchical-allreduce"}},
    {.name = "KOLO_HIERARCHICAL_ALLGATHER",
     .alias = "HOROVOD_HIERARCHICAL_ALLGATHER",
     .kind = Kind::kChoice,
     .fallback = "auto",
     .choices = kTriState,
     .section = kShm,
     .description = "the same for allgather: across hosts per local rank, then within the host",
     .flag = {.form = Form::kSwitch,
              .names = "--hierarchical-allgather",
              .config_key = "params.hierarchical_allgather",
              .off_names = "--no-hierarchical-allgather"}},

    // Collective algorithms.
    {.name = "KOLO_ALLREDUCE_ALGORITHM",
     .kind = Kind::kChoice,
     .fallback = "auto",
     .choices = "auto|recursive_doubling|ring",
     .section = kAlgorithms,
     .description = "`auto`, `recursive_doubling` or `ring`"},
    {.name = "KOLO_ALLREDUCE_RING_THRESHOLD",
     .kind = Kind::kSize,
     .fallback = "256K",
     .range = kZeroOrMore,
     .section = kAlgorithms,
     .description = "with `auto`: messages of at least this many bytes use the ring "
                    "(reduce-scatter + allgather), smaller ones recursive doubling"},
    {.name = "KOLO_BROADCAST_ALGORITHM",
     .kind = Kind::kChoice,
     .fallback = "auto",
     .choices = "auto|tree|pipelined",
     .section = kAlgorithms,
     .description = "`auto`, `tree` or `pipelined`"},
    {.name = "KOLO_BROADCAST_PIPELINE_THRESHOLD",
     .kind = Kind::kSize,
     .fallback = "512K",
     .range = kZeroOrMore,
     .section = kAlgorithms,
     .description = "with `auto`: messages of at least this many bytes use the pipelined "
                    "chain, smaller ones the binomial tree"},
    {.name = "KOLO_BROADCAST_CHUNK_BYTES",
     .kind = Kind::kSize,
     .fallback = "256K",
     .range = {1},
     .section = kAlgorithms,
     .description = "chunk size of the pipelined broadcast"},
    {.name = "KOLO_RING_CHUNK_BYTES",
     .kind = Kind::kSize,
     .fallback = "1M",
     .range = {1},
     .section = kAlgorithms,
     .description = "ring steps are cut into chunks this big so reduction overlaps transfer "
                    "(the allreduce ring: at most this big)"},
    {.name = "KOLO_RING_MIN_CHUNK_BYTES",
     .kind = Kind::kSize,
     .fallback = "256K",
     .range = kZeroOrMore,
     .section = kAlgorithms,
     .description = "the ring allreduce cuts a message into chunks of 1/64 of it, but at least "
                    "this big (and at most `KOLO_RING_CHUNK_BYTES`)"},

    // Reduction kernels.
    {.name = "KOLO_SIMD",
     .kind = Kind::kChoice,
     .fallback = "auto",
     .choices = "auto|avx512|avx2|portable",
     .section = kKernels,
     .description =
         "instruction set of the reduction and scaling kernels: `auto` (the best this CPU "
         "runs: `avx512`, then `avx2`, then `portable`), `avx512` (AVX-512 F/BW/VL/DQ), `avx2` "
         "(AVX2 + F16C) or `portable` (the compiler's baseline). A level the CPU lacks falls "
         "back to the best it has (logged at debug level). Every level gives the same bits "
         "(except which NaN a NaN + NaN returns)"},

    // Engine.
    {.name = "KOLO_FUSION_THRESHOLD",
     .alias = "HOROVOD_FUSION_THRESHOLD",
     .kind = Kind::kSize,
     .fallback = "128M",
     .range = kZeroOrMore,
     .section = kEngine,
     .description = "allreduces that are ready in the same cycle (same dtype, op, scaling, "
                    "device) are fused into one collective of at most this many bytes; 0 "
                    "turns fusion off",
     .flag = {.form = Form::kValue,
              .names = "--fusion-threshold-mb",
              .value_name = "MiB",
              .scale = 1048576,
              .config_key = "params.fusion_threshold_mb"}},
    {.name = "KOLO_CYCLE_TIME",
     .alias = "HOROVOD_CYCLE_TIME",
     .kind = Kind::kMillis,
     .fallback = "1",
     .range = {0, 10000, true},
     .section = kEngine,
     .description =
         "the background thread negotiates at most once per cycle: longer cycles fuse more "
         "tensors per collective, shorter ones add less latency. While a rank has nothing "
         "queued or in flight, its pause doubles after each idle cycle up to 8 cycles, and ends "
         "at the next enqueue. A cycle starts early once a burst of enqueues has been quiet for "
         "a tenth of the cycle time; a cycle that leaves this rank's tensors waiting for a peer "
         "is followed after a tenth of the cycle time (doubling, up to the cycle time, while "
         "such cycles run nothing)",
     .flag = {.form = Form::kValue,
              .names = "--cycle-time-ms",
              .value_name = "MS",
              .config_key = "params.cycle_time_ms"}},
    {.name = "KOLO_CACHE_CAPACITY",
     .alias = "HOROVOD_CACHE_CAPACITY",
     .kind = Kind::kInt,
     .fallback = "1024",
     .range = {0, 1048576},
     .section = kEngine,
     .description = "response-cache slots per process set; a tensor seen before with the same "
                    "parameters is negotiated with one bitwise AND instead of a round trip "
                    "through the coordinator; 0 turns the cache off",
     .flag = {.form = Form::kValue,
              .names = "--cache-capacity",
              .value_name = "N",
              .config_key = "params.cache_capacity"}},
    {.name = "KOLO_TIMELINE",
     .alias = "HOROVOD_TIMELINE",
     .kind = Kind::kString,
     .section = kEngine,
     .description = "rank 0 writes a Chrome-trace timeline of the job to this file from init "
                    "(open it in Perfetto or chrome://tracing)",
     .flag = {.form = Form::kValue,
              .names = "--timeline-filename",
              .value_name = "FILE",
              .config_key = "timeline.filename"},
     .default_doc = "(off)"},
    {.name = "KOLO_TIMELINE_MARK_CYCLES",
     .alias = "HOROVOD_TIMELINE_MARK_CYCLES",
     .kind = Kind::kBool,
     .fallback = "0",
     .section = kEngine,
     .description = "add a CYCLE_START marker for every engine cycle",
     .flag = {.form = Form::kSwitch,
              .names = "--timeline-mark-cycles",
              .config_key = "timeline.mark_cycles",
              .off_names = "--no-timeline-mark-cycles"}},
    {.name = "KOLO_STALL_CHECK_DISABLE",
     .alias = "HOROVOD_STALL_CHECK_DISABLE",
     .kind = Kind::kBool,
     .fallback = "0",
     .section = kEngine,
     .description = "turn the stall inspector off",
     .flag = {.form = Form::kSwitch,
              .names = "--no-stall-check",
              .config_key = "stall_check.enabled",
              .inverted = true,
              .off_names = "--stall-check"}},
    {.name = "KOLO_STALL_CHECK_TIME_SECONDS",
     .alias = "HOROVOD_STALL_CHECK_TIME_SECONDS",
     .kind = Kind::kSeconds,
     .fallback = "60",
     .range = kAboveZero,
     .section = kEngine,
     .description = "the coordinator warns about every tensor some ranks have submitted and "
                    "others have not for this long, naming the missing ranks",
     .flag = {.form = Form::kValue,
              .names = "--stall-check-warning-time-seconds",
              .value_name = "SECONDS",
              .config_key = "stall_check.warning_time_seconds"}},
    {.name = "KOLO_STALL_SHUTDOWN_TIME_SECONDS",
     .alias = "HOROVOD_STALL_SHUTDOWN_TIME_SECONDS",
     .kind = Kind::kSeconds,
     .fallback = "0",
     .range = kZeroOrMore,
     .section = kEngine,
     .description = "a tensor some ranks have submitted and others have not for this long "
                    "fails on the ranks that submitted it, naming the missing ranks; the engine "
                    "goes on (Horovod shuts down). A frozen rank, which answers no negotiation, "
                    "is caught too: a peer silent this long is declared lost, as after "
                    "`KOLO_PEER_TIMEOUT_SECONDS`. Must be 0 (never) or at least the warning time",
     .flag = {.form = Form::kValue,
              .names = "--stall-check-shutdown-time-seconds",
              .value_name = "SECONDS",
              .config_key = "stall_check.shutdown_time_seconds"}},
    {.name = "KOLO_BACKEND",
     .kind = Kind::kChoice,
     .fallback = "auto",
     .choices = "auto|tcp|mpi",
     .section = kEngine,
     .description = "communication backend: `auto`, `tcp` (TCP only, no shared memory) or `mpi` "
                    "(the MPI library's collectives, for fabrics TCP cannot use; ranks started by "
                    "mpirun, no rendezvous server; needs the plugin libkolo_mpi.so and libmpi)"},
    {.name = "KOLO_OUTPUT_CACHE",
     .kind = Kind::kSize,
     .fallback = "256M",
     .range = kZeroOrMore,
     .section = kEngine,
     .description = "freed outputs the engine keeps for the next output of a similar size, at "
                    "most this many bytes: the outputs it allocates (allgather, alltoall, "
                    "reducescatter) and the out-of-place results of kolo.torch and kolo.numpy "
                    "(`out = allreduce(t)`), whose memory is then not faulted in afresh each "
                    "call; an output is reused only once nothing refers to it. 0 frees every "
                    "output at once"},

    // Autotune (core/autotune/parameter_manager.h).
    {.name = "KOLO_AUTOTUNE",
     .alias = "HOROVOD_AUTOTUNE",
     .kind = Kind::kBool,
     .fallback = "0",
     .section = kAutotune,
     .description =
         "1: rank 0 tunes the fusion threshold and cycle time (Bayesian optimization: a Gaussian "
         "process with expected improvement), then the response cache and, across hosts of "
         "equal size, hierarchical allreduce and allgather, scored by the bytes the "
         "collectives move per microsecond; every rank switches after the same negotiation "
         "cycle, and the best settings stay once the samples run out. Settings the user set "
         "explicitly are not tuned",
     .flag = {.form = Form::kSwitch,
              .names = "--autotune",
              .config_key = "autotune.enabled",
              .off_names = "--no-autotune"}},
    {.name = "KOLO_AUTOTUNE_LOG",
     .alias = "HOROVOD_AUTOTUNE_LOG",
     .kind = Kind::kString,
     .section = kAutotune,
     .description = "rank 0 writes every scored sample and the best settings to this CSV file, in "
                    "Horovod's columns",
     .flag = {.form = Form::kValue,
              .names = "--autotune-log-file",
              .value_name = "FILE",
              .config_key = "autotune.log_file"},
     .default_doc = "(none)"},
    {.name = "KOLO_AUTOTUNE_WARMUP_SAMPLES",
     .alias = "HOROVOD_AUTOTUNE_WARMUP_SAMPLES",
     .kind = Kind::kInt,
     .fallback = "3",
     .range = kNonNegative,
     .section = kAutotune,
     .description = "samples discarded at the start, while caches and buffers settle",
     .flag = {.form = Form::kValue,
              .names = "--autotune-warmup-samples",
              .value_name = "N",
              .config_key = "autotune.warmup_samples"}},
    {.name = "KOLO_AUTOTUNE_STEPS_PER_SAMPLE",
     .alias = "HOROVOD_AUTOTUNE_STEPS_PER_SAMPLE",
     .kind = Kind::kInt,
     .fallback = "10",
     .range = kNonNegative,
     .section = kAutotune,
     .description = "a sample is five measurements, each lasting until some tensor has run this "
                    "many more times (0 counts as 1); its score is their median",
     .flag = {.form = Form::kValue,
              .names = "--autotune-steps-per-sample",
              .value_name = "N",
              .config_key = "autotune.steps_per_sample"}},
    {.name = "KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES",
     .alias = "HOROVOD_AUTOTUNE_BAYES_OPT_MAX_SAMPLES",
     .kind = Kind::kInt,
     .fallback = "20",
     .range = kNonNegative,
     .section = kAutotune,
     .description = "samples of the fusion threshold and cycle time (the four starting points "
                    "included) before the on/off settings are tried",
     .flag = {.form = Form::kValue,
              .names = "--autotune-bayes-opt-max-samples",
              .value_name = "N",
              .config_key = "autotune.bayes_opt_max_samples"}},
    {.name = "KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE",
     .alias = "HOROVOD_AUTOTUNE_GAUSSIAN_PROCESS_NOISE",
     .kind = Kind::kNumber,
     .fallback = "0.8",
     .range = {0, 1},
     .section = kAutotune,
     .description = "the Gaussian process's noise (alpha), relative to the scores' variance: "
                    "higher trusts single samples less on a noisy network",
     .flag = {.form = Form::kValue,
              .names = "--autotune-gaussian-process-noise",
              .value_name = "ALPHA",
              .config_key = "autotune.gaussian_process_noise"}},

    // Logging.
    {.name = "KOLO_LOG_LEVEL",
     .alias = "HOROVOD_LOG_LEVEL",
     .kind = Kind::kChoice,
     .fallback = "warning",
     .choices = "trace|debug|info|warning,warn|error,fatal",
     .section = kLogging,
     .description = "`trace`, `debug`, `info`, `warning` or `error` (any case; `warn` and "
                    "horovodrun's `fatal` are accepted as `warning` and `error`)",
     .flag = {.form = Form::kValue,
              .names = "--log-level",
              .value_name = "LEVEL",
              .config_key = "logging.level"}},
    {.name = "KOLO_LOG_HIDE_TIME",
     .alias = "HOROVOD_LOG_HIDE_TIME",
     .kind = Kind::kBool,
     .fallback = "0",
     .section = kLogging,
     .description = "1 leaves the time out of Kolo's log lines (`[kolo WARNING pid 42] ...` "
                    "instead of `[kolo 1700000000.123 WARNING pid 42] ...`)",
     .flag = {.form = Form::kSwitch,
              .names = "--log-without-timestamp,--log-hide-timestamp",
              .config_key = "logging.hide_timestamp",
              .off_names = "--log-with-timestamp,--no-log-hide-timestamp",
              .off_config_key = "logging.with_timestamp"}},

    // Elastic mode.
    {.name = "KOLO_ELASTIC",
     .kind = Kind::kBool,
     .fallback = "0",
     .section = kElastic,
     .description = "1: the layout comes from the driver at each init, not from `KOLO_RANK` …"},
    {.name = "KOLO_ELASTIC_WORKER",
     .kind = Kind::kString,
     .section = kElastic,
     .description = "the worker's id for the driver; never reused in a job",
     .default_doc = "(required with `KOLO_ELASTIC`)"},
    {.name = "KOLO_ELASTIC_TIMEOUT",
     .kind = Kind::kSeconds,
     .fallback = "660",
     .range = kAboveZero,
     .section = kElastic,
     .description = "how long an init waits for its place in a round (kolorun sets "
                    "`--elastic-timeout` + 30)"},
    {.name = "KOLO_ELASTIC_HOST_FAILURES",
     .kind = Kind::kInt,
     .fallback = "3",
     .range = kPositive,
     .section = kElastic,
     .description = "kolorun blacklists a host at the N-th worker failure on it (counted "
                    "again after each blacklisting); before that the failed worker's slot is "
                    "refilled, and the host's healthy workers keep running either way (1: "
                    "horovodrun's rule, every failure blacklists)",
     .flag = {.form = Form::kValue, .names = "--elastic-host-failures", .value_name = "N"}},

    // kolo.run.
    {.name = "KOLO_RUN_ADDR",
     .kind = Kind::kString,
     .section = kRun,
     .description = "host:port of the caller's call-back server, where ranks fetch the "
                    "function and send back results",
     .default_doc = "(set by kolo.run)"},
    {.name = "KOLO_RUN_SECRET",
     .kind = Kind::kString,
     .section = kRun,
     .description = "per-call random secret; every message in both directions is signed with "
                    "it (it never crosses the wire)",
     .default_doc = "(set by kolo.run)",
     .secret = true},
    {.name = "KOLO_RUN_START_TIMEOUT",
     .kind = Kind::kSeconds,
     .fallback = "60",
     .range = kAboveZero,
     .section = kRun,
     .description = "seconds a rank keeps trying to reach the caller before giving up"},
};
#pragma GCC diagnostic pop

constexpr size_t kSettingCount = sizeof(kTable) / sizeof(kTable[0]);

// The index of the entry named `name` (KOLO_ spelling), kSettingCount when
// there is none. An index, not a pointer: GCC's -fsanitize=undefined makes
// pointer comparisons unusable in constant expressions, and settings::Name
// looks names up at compile time.
constexpr size_t index_of_setting(std::string_view name) {
  for (size_t i = 0; i < kSettingCount; ++i)
    if (kTable[i].name == name) return i;
  return kSettingCount;
}

// The entry named `name`, or nullptr.
constexpr const Spec* find_spec(std::string_view name) {
  const size_t i = index_of_setting(name);
  return i == kSettingCount ? nullptr : &kTable[i];
}

}  // namespace kolo::settings
