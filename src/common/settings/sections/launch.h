// Settings: How a rank finds its place: the rank layout the launcher sets and the
// rendezvous.
// Part of the one table of settings (settings/table.h joins the parts).
#pragma once

#include "common/settings/section_names.h"

namespace kolo::settings {

// GCC 12 warns about every omitted field of a designated initializer even
// when it has a default (fixed in GCC 13), so that warning is off here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
inline constexpr Spec kLaunchSettings[] = {
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
};
#pragma GCC diagnostic pop

}  // namespace kolo::settings
