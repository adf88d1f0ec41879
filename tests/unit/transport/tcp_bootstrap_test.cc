// Address selection and mesh bootstrap.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <thread>

#include "common/errno_text.h"
#include "common/error.h"
#include "rendezvous/memory_store.h"
#include "support/tcp_mesh.h"
#include "transport/tcp/address.h"
#include "transport/tcp/socket.h"

namespace kolo::transport::tcp {
namespace {

using namespace std::chrono_literals;

TEST(TcpAddress, LoopbackInterfaceSelectsLoopbackAddress) {
  TcpOptions options;
  options.iface = "lo";
  EXPECT_EQ(select_listen_address(options), "127.0.0.1");
}

TEST(TcpAddress, UnknownInterfaceListsTheAvailableOnes) {
  TcpOptions options;
  options.iface = "bogus0";
  try {
    select_listen_address(options);
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("'bogus0'"), std::string::npos) << what;
    EXPECT_NE(what.find("lo (127.0.0.1)"), std::string::npos) << what;
  }
}

TEST(TcpAddress, ExplicitAddressMustBeIpv4) {
  TcpOptions options;
  options.address = "10.1.2.3";
  EXPECT_EQ(select_listen_address(options), "10.1.2.3");
  options.address = "not-an-address";
  EXPECT_THROW(select_listen_address(options), InvalidArgument);
}

TEST(TcpAddress, RouteHintPicksTheRoutingAddress) {
  EXPECT_EQ(local_address_routing_to("127.0.0.1"), "127.0.0.1");
  TcpOptions options;
  options.route_hint = "127.0.0.1";
  EXPECT_EQ(select_listen_address(options), "127.0.0.1");
}

TEST(TcpAddress, DefaultIsSomeLocalIpv4) {
  std::string chosen = select_listen_address(TcpOptions{});
  in_addr parsed{};
  EXPECT_EQ(inet_pton(AF_INET, chosen.c_str(), &parsed), 1) << chosen;
}

TEST(TcpBootstrap, MeshOverNamedInterface) {
  auto options = kolo::testing::loopback_tcp_options();
  options.address.clear();
  options.iface = "lo";
  auto mesh = kolo::testing::make_tcp_mesh(3, options);
  kolo::testing::run_ranks(mesh, [](Context& ctx) {
    int v = ctx.rank(), got = -1;
    auto s = ctx.isend((ctx.rank() + 1) % 3, 1, &v, sizeof(v));
    ctx.recv((ctx.rank() + 2) % 3, 1, &got, sizeof(got));
    s->wait();
    EXPECT_EQ(got, (ctx.rank() + 2) % 3);
  });
}

// A connection that does not carry this mesh's hello (another job, an old
// round, a port scanner) is dropped and the mesh still forms.
TEST(TcpBootstrap, StrayConnectionIsRejected) {
  rendezvous::MemoryStore store;
  auto options = kolo::testing::loopback_tcp_options();
  std::unique_ptr<Context> rank0, rank1;
  std::thread t0([&] { rank0 = connect_full_mesh(store, 0, 2, options); });
  std::string addr = rendezvous::to_string(store.wait_get("tcp/addr/0", 5s));
  int port = std::stoi(addr.substr(addr.rfind(':') + 1));
  int err = 0;
  UniqueFd stray = try_connect("127.0.0.1", port, 0, "", Clock::now() + 2s, &err);
  ASSERT_TRUE(stray.valid()) << errno_text(err);
  char garbage[64] = "GET / HTTP/1.0\r\n\r\n";
  ASSERT_TRUE(write_all_until(stray.get(), garbage, sizeof(garbage), Clock::now() + 2s, &err));
  std::thread t1([&] { rank1 = connect_full_mesh(store, 1, 2, options); });
  t0.join();
  t1.join();
  ASSERT_TRUE(rank0 && rank1);
  int v = 5, got = 0;
  rank1->send(0, 1, &v, sizeof(v));
  rank0->recv(1, 1, &got, sizeof(got));
  EXPECT_EQ(got, 5);
}

TEST(TcpBootstrap, WorldOfOne) {
  auto mesh = kolo::testing::make_tcp_mesh(1);
  int v = 3, got = 0;
  auto r = mesh[0]->irecv(0, 1, &got, sizeof(got));
  mesh[0]->send(0, 1, &v, sizeof(v));
  r->wait();
  EXPECT_EQ(got, 3);
}

}  // namespace
}  // namespace kolo::transport::tcp
