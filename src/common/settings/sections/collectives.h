// Settings: Collective algorithms and reduction kernels.
// Part of the one table of settings (settings/table.h joins the parts).
#pragma once

#include "common/settings/section_names.h"

namespace kolo::settings {

// GCC 12 warns about every omitted field of a designated initializer even
// when it has a default (fixed in GCC 13), so that warning is off here.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmissing-field-initializers"
inline constexpr Spec kCollectiveSettings[] = {
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
};
#pragma GCC diagnostic pop

}  // namespace kolo::settings
