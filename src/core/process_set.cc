#include "core/process_set.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "common/error.h"

namespace kolo::core {

std::vector<int> normalize_process_set_ranks(std::vector<int> ranks, int world_size) {
  if (ranks.empty()) throw InvalidArgument("a process set needs at least one rank");
  std::sort(ranks.begin(), ranks.end());
  if (std::adjacent_find(ranks.begin(), ranks.end()) != ranks.end()) {
    throw InvalidArgument(
        fmt::format("process set [{}] lists a rank twice", fmt::join(ranks, ", ")));
  }
  if (ranks.front() < 0 || ranks.back() >= world_size) {
    throw InvalidArgument(fmt::format("process set [{}] has ranks outside [0, {})",
                                      fmt::join(ranks, ", "), world_size));
  }
  return ranks;
}

}  // namespace kolo::core
