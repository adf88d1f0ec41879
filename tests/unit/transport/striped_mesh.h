// Test support for the striped TCP context: N ranks as threads, each
// connected through tcp::connect (the factory the library uses) with
// `streams` meshes over loopback.
#pragma once

#include <cstddef>
#include <vector>

#include "rendezvous/memory_store.h"
#include "support/tcp_mesh.h"
#include "transport/striped_context.h"

namespace kolo::testing {

// Just above two parts of StripeLayout::kMinPartBytes (128 KiB), so a
// message at the threshold is cut in two and one a byte shorter is not.
constexpr size_t kTestStripeBytes = 300 * 1000;

inline transport::tcp::TcpOptions striped_options(
    int streams, size_t stripe_threshold = kTestStripeBytes,
    std::chrono::milliseconds op_timeout = std::chrono::seconds(20)) {
  auto options = loopback_tcp_options(op_timeout);
  options.streams = streams;
  options.stripe_threshold = stripe_threshold;
  return options;
}

inline Contexts make_striped_mesh(int size, const transport::tcp::TcpOptions& options) {
  rendezvous::MemoryStore store;
  Contexts contexts(size);
  run_threads(size, [&](int rank) {
    contexts[rank] = transport::tcp::connect(store, rank, size, options);
  });
  return contexts;
}

// A StripedContext per rank over `streams` plain meshes built here, with
// each rank's raw streams returned too, so a test can send on one stream
// only (a message cut short on purpose).
struct ExposedStripes {
  Contexts striped;
  std::vector<std::vector<transport::Context*>> raw;  // [rank][stream]
};

inline ExposedStripes make_exposed_stripes(int size, int streams, size_t stripe_threshold,
                                           const transport::tcp::TcpOptions& options) {
  std::vector<Contexts> meshes;
  for (int s = 0; s < streams; ++s) meshes.push_back(make_tcp_mesh(size, options));
  ExposedStripes out;
  out.raw.resize(size);
  for (int r = 0; r < size; ++r) {
    Contexts mine;
    for (int s = 0; s < streams; ++s) {
      out.raw[r].push_back(meshes[s][r].get());
      mine.push_back(std::move(meshes[s][r]));
    }
    out.striped.push_back(
        std::make_unique<transport::StripedContext>(std::move(mine), stripe_threshold));
  }
  return out;
}

}  // namespace kolo::testing
