// Settings: The data plane: the TCP transport and shared memory.
// Part of the one table of settings (settings/table.h joins the parts).
#pragma once

#include "common/settings/section_names.h"

namespace kolo::settings {

// GCC 12 warns about every omitted field of a designated initializer even
// when it has a default (fixed in GCC 13), so that warning is off here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
inline constexpr Spec kTransportSettings[] = {
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
};
#pragma GCC diagnostic pop

}  // namespace kolo::settings
