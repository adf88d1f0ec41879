// Settings: Set by kolorun for elastic jobs, and by kolo.run.
// Part of the one table of settings (settings/table.h joins the parts).
#pragma once

#include "common/settings/section_names.h"

namespace kolo::settings {

// GCC 12 warns about every omitted field of a designated initializer even
// when it has a default (fixed in GCC 13), so that warning is off here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
inline constexpr Spec kElasticSettings[] = {
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

}  // namespace kolo::settings
