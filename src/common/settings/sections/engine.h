// Settings: The engine (cycles, fusion, caches, stall inspector), autotune and logging.
// Part of the one table of settings (settings/table.h joins the parts).
#pragma once

#include "common/settings/section_names.h"

namespace kolo::settings {

// GCC 12 warns about every omitted field of a designated initializer even
// when it has a default (fixed in GCC 13), so that warning is off here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
inline constexpr Spec kEngineSettings[] = {
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
         "at the next enqueue. A cycle starts early once this rank's burst of enqueues is over: "
         "at once when a caller waits for a handle it enqueued, otherwise once the enqueues have "
         "been quiet for a tenth of the cycle time; a cycle that leaves this rank's tensors "
         "waiting for a peer "
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
    {.name = "KOLO_ENGINE_WEDGED_SECONDS",
     .kind = Kind::kSeconds,
     .fallback = "5",
     .range = kZeroOrMore,
     .section = kEngine,
     .description = "liveness of the engine's own thread: a rank whose background thread has run "
                    "its own code this long without coming back to a wait (for its next cycle, "
                    "or on its peers in a negotiation or collective) is wedged, a completion "
                    "callback that never returns or a deadlock, which its heartbeats (sent by "
                    "the transport's thread) do not show. It aborts the job naming itself "
                    "(\"rank 1 (host b) is wedged: ...\") on every rank and in kolorun's last "
                    "line, whatever `KOLO_PEER_TIMEOUT_SECONDS`. 0: never"},
    {.name = "KOLO_TEST_WEDGE_ENGINE_SECONDS",
     .kind = Kind::kSeconds,
     .fallback = "0",
     .range = kZeroOrMore,
     .section = kEngine,
     .description = "test only (the fault matrix's wedged-engine case): after the first "
                    "collective it runs, this rank's engine thread blocks this long in its own "
                    "code, as a callback that never returns would, so that "
                    "`KOLO_ENGINE_WEDGED_SECONDS` can be tested from a real job. 0: never"},
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
};
#pragma GCC diagnostic pop

}  // namespace kolo::settings
