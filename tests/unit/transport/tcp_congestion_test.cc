// Congestion control of the data connections (transport/tcp/congestion.h):
// the plan per setting, the same-host rule, and what a real mesh's sockets
// end up with.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <fstream>
#include <string>
#include <vector>

#include "common/errno_text.h"
#include "common/error.h"
#include "rendezvous/memory_store.h"
#include "support/tcp_mesh.h"
#include "transport/tcp/bootstrap.h"
#include "transport/tcp/congestion.h"
#include "transport/tcp/socket.h"

namespace kolo::transport::tcp {
namespace {

using namespace std::chrono_literals;

std::string host_default() {
  std::ifstream in("/proc/sys/net/ipv4/tcp_congestion_control");
  std::string name;
  in >> name;
  return name;
}

std::string refusal(const std::string& setting) {
  try {
    plan_congestion(setting);
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  ADD_FAILURE() << "KOLO_TCP_CONGESTION=" << setting << " was accepted";
  return "";
}

// A loopback connection whose client end has the source address `from`.
struct Connection {
  UniqueFd listener, client, server;
};

Connection connect_from(const std::string& from, const std::string& listener_congestion) {
  Connection c;
  int port = 0;
  c.listener = listen_on("127.0.0.1", 4, 0, listener_congestion, &port);
  c.client = UniqueFd(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  sockaddr_in source{};
  source.sin_family = AF_INET;
  ::inet_pton(AF_INET, from.c_str(), &source.sin_addr);
  if (::bind(c.client.get(), reinterpret_cast<sockaddr*>(&source), sizeof(source)) != 0)
    throw IoError("bind " + from + ": " + errno_text(errno));
  sockaddr_in target{};
  target.sin_family = AF_INET;
  target.sin_port = htons(static_cast<uint16_t>(port));
  ::inet_pton(AF_INET, "127.0.0.1", &target.sin_addr);
  if (::connect(c.client.get(), reinterpret_cast<sockaddr*>(&target), sizeof(target)) != 0)
    throw IoError("connect: " + errno_text(errno));
  c.server = accept_until(c.listener.get(), Clock::now() + 5s);
  if (!c.server.valid()) throw IoError("accept timed out");
  return c;
}

TEST(TcpCongestion, AutoIsUnpacedWithinAHostAndTheHostDefaultAcross) {
  const CongestionPlan plan = plan_congestion("auto");
  EXPECT_TRUE(plan.within_host == "cubic" || plan.within_host == "reno") << plan.within_host;
  EXPECT_EQ(plan.across_hosts, host_default());
}

TEST(TcpCongestion, SystemLeavesEverySocketAlone) {
  const CongestionPlan plan = plan_congestion("system");
  EXPECT_EQ(plan.within_host, "");
  EXPECT_EQ(plan.across_hosts, "");
}

TEST(TcpCongestion, ANameIsUsedForEveryConnection) {
  // Every process may use reno.
  const CongestionPlan plan = plan_congestion("reno");
  EXPECT_EQ(plan.within_host, "reno");
  EXPECT_EQ(plan.across_hosts, "reno");
}

TEST(TcpCongestion, RefusedOrMalformedSettingsSayWhy) {
  const std::string unknown = refusal("no-such-cc");
  EXPECT_NE(unknown.find("KOLO_TCP_CONGESTION=no-such-cc: the kernel refused it"),
            std::string::npos)
      << unknown;
  EXPECT_NE(unknown.find("this host offers: "), std::string::npos) << unknown;
  EXPECT_NE(unknown.find("reno"), std::string::npos) << unknown;
  for (const char* bad : {"", "two words", "a-name-of-16-chr", "x/y"}) {
    const std::string what = refusal(bad);
    EXPECT_NE(what.find("is not a setting"), std::string::npos) << bad << ": " << what;
  }
}

TEST(TcpCongestion, SameHostMeansOneAddressAtBothEnds) {
  Connection local = connect_from("127.0.0.1", "");
  EXPECT_TRUE(same_host_connection(local.server.get()));
  EXPECT_TRUE(same_host_connection(local.client.get()));
  Connection other = connect_from("127.0.0.2", "");
  EXPECT_FALSE(same_host_connection(other.server.get()));
  EXPECT_FALSE(same_host_connection(other.client.get()));
  EXPECT_FALSE(same_host_connection(local.listener.get()));  // no peer
}

// Both ends get their algorithm before the handshake: the connecting
// socket from try_connect, the accepted one from its listener.
TEST(TcpCongestion, ConnectAndListenSetTheAlgorithmBeforeTheHandshake) {
  int port = 0;
  UniqueFd listener = listen_on("127.0.0.1", 4, 0, "reno", &port);
  EXPECT_EQ(congestion_of(listener.get()), "reno");
  int err = 0;
  UniqueFd client = try_connect("127.0.0.1", port, 0, "reno", Clock::now() + 5s, &err);
  ASSERT_TRUE(client.valid()) << errno_text(err);
  UniqueFd server = accept_until(listener.get(), Clock::now() + 5s);
  ASSERT_TRUE(server.valid());
  EXPECT_EQ(congestion_of(client.get()), "reno");
  EXPECT_EQ(congestion_of(server.get()), "reno");
  UniqueFd plain = try_connect("127.0.0.1", port, 0, "", Clock::now() + 5s, &err);
  ASSERT_TRUE(plain.valid()) << errno_text(err);
  EXPECT_EQ(congestion_of(plain.get()), host_default());
}

// The listener's algorithm is inherited by what it accepts; settling moves a
// connection from another address to the across-hosts choice and leaves a
// same-address one on the within-host choice.
TEST(TcpCongestion, SettlingGivesAConnectionFromElsewhereTheAcrossHostsChoice) {
  std::string across = host_default();
  if (across == "reno") {
    UniqueFd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
    try {
      set_congestion(probe.get(), "cubic");
    } catch (const InvalidArgument&) {
      GTEST_SKIP() << "only reno is usable here, so the two choices cannot differ";
    }
    across = "cubic";
  }
  const CongestionPlan plan{"reno", across};

  Connection other = connect_from("127.0.0.2", plan.within_host);
  ASSERT_EQ(congestion_of(other.server.get()), "reno");
  settle_congestion(other.server.get(), plan);
  EXPECT_EQ(congestion_of(other.server.get()), across);

  Connection local = connect_from("127.0.0.1", plan.within_host);
  settle_congestion(local.server.get(), plan);
  EXPECT_EQ(congestion_of(local.server.get()), "reno");
}

// Every connection of a real mesh (3 ranks on this host: some accepted,
// some connected) ends up with the setting's within-host algorithm.
TEST(TcpCongestion, MeshConnectionsOnOneHostFollowTheSetting) {
  const std::string within_auto = plan_congestion("auto").within_host;
  for (const auto& [setting, expected] : std::vector<std::pair<std::string, std::string>>{
           {"auto", within_auto}, {"system", host_default()}, {"reno", "reno"}}) {
    auto options = kolo::testing::loopback_tcp_options();
    options.congestion = setting;
    rendezvous::MemoryStore store;
    std::vector<MeshSockets> meshes(3);
    kolo::testing::run_threads(
        3, [&](int rank) { meshes[rank] = build_mesh(store, rank, 3, options); });
    for (int rank = 0; rank < 3; ++rank)
      for (int peer = 0; peer < 3; ++peer) {
        if (peer == rank) continue;
        EXPECT_EQ(congestion_of(meshes[rank].peers[peer].get()), expected)
            << "KOLO_TCP_CONGESTION=" << setting << ", rank " << rank << " to " << peer;
      }
  }
}

}  // namespace
}  // namespace kolo::transport::tcp
