// Test support: N ranks as threads of one process, connected by the TCP
// transport over loopback after meeting in a MemoryStore. For transport and
// collectives tests:
//
//   auto mesh = kolo::testing::make_tcp_mesh(4);
//   kolo::testing::run_ranks(mesh, [](kolo::transport::Context& ctx) {
//     ... ctx.rank(), ctx.isend(...), ...
//   });
//
// Link the test with kolo_transport (which brings kolo_rendezvous).
#pragma once

#include <chrono>
#include <exception>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "rendezvous/memory_store.h"
#include "transport/context.h"
#include "transport/tcp/tcp_context.h"

namespace kolo::testing {

using Contexts = std::vector<std::unique_ptr<transport::Context>>;

// Loopback, with timeouts short enough that a broken test fails instead of
// stalling the suite.
inline transport::tcp::TcpOptions loopback_tcp_options(
    std::chrono::milliseconds op_timeout = std::chrono::seconds(20)) {
  transport::tcp::TcpOptions options;
  options.address = "127.0.0.1";
  options.connect_timeout = std::chrono::seconds(10);
  options.op_timeout = op_timeout;
  return options;
}

// Runs fn(rank) on `size` threads at once and rethrows the first exception
// (by rank order) after all have finished.
inline void run_threads(int size, const std::function<void(int rank)>& fn) {
  std::vector<std::exception_ptr> errors(size);
  std::vector<std::thread> threads;
  threads.reserve(size);
  for (int r = 0; r < size; ++r)
    threads.emplace_back([&, r] {
      try {
        fn(r);
      } catch (...) {
        errors[r] = std::current_exception();
      }
    });
  for (auto& t : threads) t.join();
  for (auto& e : errors)
    if (e) std::rethrow_exception(e);
}

// Builds `size` fully connected contexts (index = rank) over loopback. The
// store only lives for the bootstrap; contexts do not need it afterwards.
inline Contexts make_tcp_mesh(int size,
                              const transport::tcp::TcpOptions& options = loopback_tcp_options()) {
  rendezvous::MemoryStore store;
  Contexts contexts(size);
  run_threads(size, [&](int rank) {
    contexts[rank] = transport::tcp::connect_full_mesh(store, rank, size, options);
  });
  return contexts;
}

// Runs fn(context) for every rank on its own thread; rethrows the first
// failure. Every transport wait is bounded by the options' op_timeout, so
// this cannot hang longer than that.
inline void run_ranks(Contexts& contexts, const std::function<void(transport::Context&)>& fn) {
  run_threads(static_cast<int>(contexts.size()), [&](int rank) { fn(*contexts[rank]); });
}

}  // namespace kolo::testing
