// One rank of the launcher start-up benchmark (bench/launcher_startup.sh):
// connect, allreduce one float, and on rank 0 print how long it has been
// since LAUNCH_START_NS (the wall clock just before the launcher started).
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <string>

#include "core/config.h"
#include "core/world.h"

int main() {
  using namespace kolo;
  Config config = Config::FromEnv();
  World world = connect_world(config);
  float in = 1, out = 0;
  world.backend->allreduce(&in, &out, 1, DataType::kFloat32, {ReduceOp::kSum});
  const auto now = std::chrono::duration_cast<std::chrono::nanoseconds>(
                       std::chrono::system_clock::now().time_since_epoch())
                       .count();
  const char* start = std::getenv("LAUNCH_START_NS");
  if (world.backend->rank() == 0 && start != nullptr)
    fmt::print("first_collective_ms {:.1f} sum {}\n", (now - std::stoll(start)) / 1e6, out);
  return out == static_cast<float>(world.backend->size()) ? 0 : 1;
}
