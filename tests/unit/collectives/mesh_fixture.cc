#include "mesh_fixture.h"

#include <fmt/format.h>

#include <exception>
#include <thread>

#include "support/tcp_mesh.h"

namespace kolo::testing {

std::string run_on_ranks(std::vector<std::unique_ptr<Context>>& contexts,
                         const std::function<void(Context&)>& fn) {
  std::vector<std::string> errors(contexts.size());
  {
    std::vector<std::jthread> threads;
    for (size_t r = 0; r < contexts.size(); ++r) {
      threads.emplace_back([&, r] {
        try {
          fn(*contexts[r]);
        } catch (const std::exception& e) {
          errors[r] = e.what();
          contexts[r]->abort(e.what());
        }
      });
    }
  }
  std::string out;
  for (size_t r = 0; r < errors.size(); ++r)
    if (!errors[r].empty()) out += fmt::format("rank {}: {}\n", r, errors[r]);
  return out;
}

// The real transport over loopback: what the engine runs on, with the
// fixture's short operation timeout so a broken case fails instead of
// stalling the suite.
std::vector<std::unique_ptr<Context>> make_test_mesh(int size) {
  return make_tcp_mesh(size);
}

}  // namespace kolo::testing
