#include "unit/backends/topology_fixture.h"

#include <exception>

#include "support/tcp_mesh.h"

namespace kolo::testing {

transport::shm::ShmOptions small_slot_options() {
  transport::shm::ShmOptions shm;
  shm.slot_bytes = 4096;
  // Not a multiple of any element's vector width: tiles end mid-vector.
  shm.tile_bytes = 200;
  shm.op_timeout = std::chrono::seconds(20);
  return shm;
}

std::vector<std::unique_ptr<backends::HostBackend>> make_backends(
    const std::vector<int>& hosts, const transport::shm::ShmOptions& shm,
    const collectives::CollectiveOptions& options) {
  const int n = static_cast<int>(hosts.size());
  Contexts contexts = make_tcp_mesh(n);
  std::vector<std::unique_ptr<backends::HostBackend>> backends(n);
  run_threads(n, [&](int rank) {
    std::shared_ptr<transport::Context> context(std::move(contexts[rank]));
    backends[rank] = std::make_unique<backends::HostBackend>(context, options, shm, hosts[rank]);
  });
  return backends;
}

std::string run_backends(std::vector<std::unique_ptr<backends::HostBackend>>& backends,
                         const std::function<void(backends::Backend&)>& fn) {
  const int n = static_cast<int>(backends.size());
  std::vector<std::string> errors(n);
  run_threads(n, [&](int rank) {
    try {
      fn(*backends[rank]);
    } catch (const std::exception& e) {
      errors[rank] = e.what();
      backends[rank]->abort(e.what());
    }
  });
  std::string all;
  for (int r = 0; r < n; ++r)
    if (!errors[r].empty()) all += "rank " + std::to_string(r) + ": " + errors[r] + "\n";
  return all;
}

}  // namespace kolo::testing
