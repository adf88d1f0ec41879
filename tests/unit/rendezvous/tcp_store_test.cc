// TcpStoreClient/TcpStoreServer behaviour beyond the Store semantics:
// connecting, credentials, limits, and failure of the server.
#include <gtest/gtest.h>

#include <atomic>
#include <future>
#include <thread>

#include "common/error.h"
#include "raw_store_peer.h"

namespace kolo::rendezvous {
namespace {

using namespace std::chrono_literals;
using testing::client_options;
using testing::elapsed_ms;
using testing::server_options;

// A port nobody listens on right now (bound, read, released).
uint16_t unused_port() {
  UniqueFd probe = net::listen_tcp("127.0.0.1", 0, 1);
  return net::local_port(probe.get());
}

TEST(TcpStore, ServerReportsItsEphemeralPort) {
  TcpStoreServer server(server_options());
  EXPECT_NE(server.port(), 0);
}

TEST(TcpStore, EmptySecretsAreRefused) {
  EXPECT_THROW(TcpStoreServer(server_options("")), InvalidArgument);
  TcpStoreServer server(server_options());
  EXPECT_THROW(TcpStoreClient(client_options(server.port(), "")), InvalidArgument);
}

TEST(TcpStore, WrongSecretThrowsAuthErrorAndTheServerKeepsServingOthers) {
  TcpStoreServer server(server_options());
  TcpStoreClient good(client_options(server.port()));
  good.set("before", to_bytes("1"));
  auto start = std::chrono::steady_clock::now();
  try {
    TcpStoreClient bad(client_options(server.port(), "not-the-secret"));
    FAIL() << "expected AuthError";
  } catch (const AuthError& e) {
    std::string expected = "rendezvous server at 127.0.0.1:" + std::to_string(server.port()) +
                           " rejected our credentials (wrong KOLO_SECRET?)";
    EXPECT_EQ(std::string(e.what()), expected);
  }
  EXPECT_LT(elapsed_ms(start), 3000);
  EXPECT_EQ(good.get("before"), to_bytes("1"));
  good.set("after", to_bytes("2"));
  EXPECT_EQ(good.get("after"), to_bytes("2"));
}

TEST(TcpStore, ClientStartedBeforeTheServerConnectsByRetrying) {
  uint16_t port = unused_port();
  auto client = std::async(std::launch::async, [port] {
    return std::make_unique<TcpStoreClient>(client_options(port));
  });
  std::this_thread::sleep_for(300ms);
  auto options = server_options();
  options.port = port;
  TcpStoreServer server(options);
  ASSERT_EQ(client.wait_for(5s), std::future_status::ready);
  auto store = client.get();
  store->set("k", to_bytes("v"));
  EXPECT_EQ(store->get("k"), to_bytes("v"));
}

TEST(TcpStore, ConnectGivesUpWithTimeoutErrorWhenNoServerComes) {
  auto options = client_options(unused_port());
  options.connect_timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  try {
    TcpStoreClient client(options);
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("could not connect to rendezvous server"),
              std::string::npos)
        << e.what();
  }
  EXPECT_LT(elapsed_ms(start), 2000);
}

TEST(TcpStore, ConnectGivesUpOnAListenerThatNeverSpeaks) {
  UniqueFd mute = net::listen_tcp("127.0.0.1", 0, 8);  // accepts in the kernel, says nothing
  auto options = client_options(net::local_port(mute.get()));
  options.connect_timeout = 300ms;
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(TcpStoreClient client(options), TimeoutError);
  EXPECT_LT(elapsed_ms(start), 2000);
}

TEST(TcpStore, DestroyedServerFailsAParkedWaitAndLaterCallsWithIoError) {
  auto server = std::make_unique<TcpStoreServer>(server_options());
  TcpStoreClient client(client_options(server->port()));
  client.set("k", to_bytes("v"));
  auto waiter = std::async(std::launch::async, [&] {
    auto start = std::chrono::steady_clock::now();
    try {
      client.wait({"never"}, 20s);
    } catch (const IoError& e) {
      return std::make_pair(std::string(e.what()), elapsed_ms(start));
    } catch (const std::exception& e) {
      return std::make_pair(std::string("wrong exception: ") + e.what(), elapsed_ms(start));
    }
    return std::make_pair(std::string("no exception"), elapsed_ms(start));
  });
  std::this_thread::sleep_for(100ms);
  server.reset();
  ASSERT_EQ(waiter.wait_for(5s), std::future_status::ready);
  auto [what, ms] = waiter.get();
  EXPECT_NE(what.find("lost connection to rendezvous server 127.0.0.1:"), std::string::npos)
      << what;
  EXPECT_LT(ms, 3000);
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(client.get("k"), IoError);
  EXPECT_THROW(client.set("k", to_bytes("x")), IoError);
  EXPECT_LT(elapsed_ms(start), 1000);
}

TEST(TcpStore, ValueOverTheClientsFrameLimitIsRefusedLocally) {
  TcpStoreServer server(server_options());
  auto options = client_options(server.port());
  options.max_frame_bytes = 4096;
  TcpStoreClient client(options);
  EXPECT_THROW(client.set("big", Bytes(8192)), InvalidArgument);
  client.set("small", Bytes(100));  // the connection is untouched
  EXPECT_EQ(client.get("small"), Bytes(100));
}

TEST(TcpStore, FrameOverTheServersLimitFailsThatCallThenTheConnection) {
  auto options = server_options();
  options.max_frame_bytes = 4096;
  TcpStoreServer server(options);
  TcpStoreClient client(client_options(server.port()));
  TcpStoreClient other(client_options(server.port()));
  try {
    client.set("big", Bytes(8192));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("exceeds the limit of 4096"), std::string::npos)
        << e.what();
  }
  EXPECT_THROW(client.get("big"), IoError);
  other.set("fine", Bytes(1000));
  EXPECT_EQ(other.get("fine"), Bytes(1000));
}

TEST(TcpStore, ManyConcurrentClientsMeet) {
  TcpStoreServer server(server_options());
  constexpr int kClients = 24;
  std::vector<std::string> everyone;
  for (int i = 0; i < kClients; ++i) everyone.push_back("rank/" + std::to_string(i));
  std::atomic<int> ok{0};
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i)
    threads.emplace_back([&, i] {
      try {
        TcpStoreClient client(client_options(server.port()));
        client.add("arrived", 1);
        client.set(everyone[i], to_bytes("addr-" + std::to_string(i)));
        client.wait(everyone, 10s);
        if (client.get(everyone[(i + 1) % kClients]) ==
            to_bytes("addr-" + std::to_string((i + 1) % kClients)))
          ++ok;
      } catch (const std::exception& e) {
        ADD_FAILURE() << "client " << i << ": " << e.what();
      }
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(ok.load(), kClients);
  TcpStoreClient check(client_options(server.port()));
  EXPECT_EQ(check.add("arrived", 0), kClients);
}

TEST(TcpStore, ClientsOfSeparateConnectionsShareOneCounterExactly) {
  TcpStoreServer server(server_options());
  constexpr int kClients = 6;
  constexpr int kAdds = 100;
  std::vector<std::thread> threads;
  for (int i = 0; i < kClients; ++i)
    threads.emplace_back([&] {
      TcpStoreClient client(client_options(server.port()));
      for (int n = 0; n < kAdds; ++n) client.add("c", 1);
    });
  for (auto& t : threads) t.join();
  TcpStoreClient check(client_options(server.port()));
  EXPECT_EQ(check.get("c"), to_bytes(std::to_string(kClients * kAdds)));
}

}  // namespace
}  // namespace kolo::rendezvous
