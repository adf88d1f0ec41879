// The engine settings the autotuner changes, as one value that travels
// from the coordinator to every rank inside a negotiation's ResponseList
// (message.h, `tuning`), so all ranks switch after the same cycle.
#pragma once

#include <string>
#include <string_view>

namespace kolo::core::autotune {

struct TunedParams {
  double fusion_threshold_mb = 128;  // MiB, as Horovod's log writes it
  double cycle_time_ms = 1;
  bool cache_enabled = true;
  bool hierarchical_allreduce = false;
  bool hierarchical_allgather = false;
  // True while the autotuner is still trying values; false once these are
  // the best it found and stay.
  bool active = true;

  bool operator==(const TunedParams&) const = default;
};

std::string encode_tuned_params(const TunedParams& params);
// Throws InvalidArgument for bytes encode_tuned_params did not write.
TunedParams decode_tuned_params(std::string_view bytes);

// "fusion 4 MiB, cycle 5 ms, cache on, hierarchical allreduce off, ..."
std::string describe(const TunedParams& params);

}  // namespace kolo::core::autotune
