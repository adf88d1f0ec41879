// Hand-run throughput checks (not tests: no timing assertions). Run with
//   build/bin/transport_test --gtest_also_run_disabled_tests --gtest_filter='*Throughput*'
// KOLO_TEST_SOCKET_BUFFER_BYTES overrides TcpOptions::socket_buffer_bytes
// (0 = kernel autotuning) to compare buffer policies.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "support/tcp_mesh.h"

namespace kolo::transport {
namespace {

using Clock = std::chrono::steady_clock;

kolo::testing::Contexts make_mesh() {
  auto options = kolo::testing::loopback_tcp_options();
  if (const char* bytes = std::getenv("KOLO_TEST_SOCKET_BUFFER_BYTES"))
    options.socket_buffer_bytes = std::strtoull(bytes, nullptr, 10);
  return kolo::testing::make_tcp_mesh(2, options);
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void ping_pong(size_t bytes, int iterations) {
  auto mesh = make_mesh();
  std::vector<uint8_t> a(bytes, 1), b(bytes, 2);
  double elapsed = 0;
  kolo::testing::run_ranks(mesh, [&](Context& ctx) {
    std::vector<uint8_t>& buf = ctx.rank() == 0 ? a : b;
    int other = 1 - ctx.rank();
    for (int warm = 0; warm < 2; ++warm) {  // first touch of the pages, socket ramp-up
      if (ctx.rank() == 0) {
        ctx.send(other, 0, buf.data(), bytes);
        ctx.recv(other, 0, buf.data(), bytes);
      } else {
        ctx.recv(other, 0, buf.data(), bytes);
        ctx.send(other, 0, buf.data(), bytes);
      }
    }
    auto start = Clock::now();
    for (int i = 0; i < iterations; ++i) {
      if (ctx.rank() == 0) {
        ctx.send(other, 1, buf.data(), bytes);
        ctx.recv(other, 1, buf.data(), bytes);
      } else {
        ctx.recv(other, 1, buf.data(), bytes);
        ctx.send(other, 1, buf.data(), bytes);
      }
    }
    if (ctx.rank() == 0) elapsed = seconds_since(start);
  });
  double one_way = elapsed / (2.0 * iterations);
  std::printf("ping-pong %10zu bytes: %9.2f us one-way, %8.1f MB/s\n", bytes, one_way * 1e6,
              static_cast<double>(bytes) / one_way / 1e6);
}

TEST(TcpThroughput, DISABLED_PingPong) {
  ping_pong(8, 2000);
  ping_pong(64 << 10, 500);
  ping_pong(1 << 20, 200);
  ping_pong(64 << 20, 10);
}

// Both ranks send 64 MiB to each other at once, repeatedly.
TEST(TcpThroughput, DISABLED_Bidirectional) {
  const size_t bytes = 64u << 20;
  const int iterations = 10;
  auto mesh = make_mesh();
  double elapsed = 0;
  kolo::testing::run_ranks(mesh, [&](Context& ctx) {
    std::vector<uint8_t> out(bytes, 1), in(bytes);
    int other = 1 - ctx.rank();
    auto start = Clock::now();
    for (int i = -1; i < iterations; ++i) {
      if (i == 0) start = Clock::now();
      auto r = ctx.irecv(other, 1, in.data(), bytes);
      auto s = ctx.isend(other, 1, out.data(), bytes);
      r->wait();
      s->wait();
    }
    if (ctx.rank() == 0) elapsed = seconds_since(start);
  });
  std::printf("bidirectional 64 MiB: %8.1f MB/s per direction\n",
              static_cast<double>(bytes) * iterations / elapsed / 1e6);
}

// Reference point: one memcpy of 64 MiB between warm buffers.
TEST(TcpThroughput, DISABLED_MemcpyReference) {
  const size_t bytes = 64u << 20;
  std::vector<uint8_t> a(bytes, 1), b(bytes, 2);
  std::memcpy(b.data(), a.data(), bytes);
  auto start = Clock::now();
  for (int i = 0; i < 10; ++i)
    std::memcpy(i % 2 ? a.data() : b.data(), i % 2 ? b.data() : a.data(), bytes);
  std::printf("memcpy 64 MiB: %8.1f MB/s\n",
              static_cast<double>(bytes) * 10 / seconds_since(start) / 1e6);
}

}  // namespace
}  // namespace kolo::transport
