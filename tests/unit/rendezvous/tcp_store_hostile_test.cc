// A hostile or broken peer must lose only its own connection: each test runs
// a well-behaved client alongside and checks it keeps working.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "common/error.h"
#include "raw_store_peer.h"

namespace kolo::rendezvous {
namespace {

using namespace std::chrono_literals;
using testing::client_options;
using testing::RawClient;
using testing::server_options;

// A good client hammering the server from another thread while a test misbehaves.
class GoodNeighbour {
 public:
  explicit GoodNeighbour(uint16_t port)
      : client_(client_options(port)), thread_([this] { run(); }) {}
  ~GoodNeighbour() {
    stop_ = true;
    thread_.join();
  }
  // Call after the misbehaviour: the neighbour saw no error and made progress.
  void expect_unharmed() {
    int64_t before = rounds_.load();
    auto deadline = std::chrono::steady_clock::now() + 3s;
    while (rounds_.load() < before + 5 && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(5ms);
    EXPECT_GE(rounds_.load(), before + 5) << "the good client stalled";
    EXPECT_EQ(error_, "");
  }

 private:
  void run() {
    try {
      while (!stop_) {
        int64_t n = client_.add("neighbour", 1);
        client_.set("neighbour-last", to_bytes(std::to_string(n)));
        if (client_.get("neighbour-last") != to_bytes(std::to_string(n)))
          throw std::runtime_error("read back the wrong value");
        ++rounds_;
      }
    } catch (const std::exception& e) {
      error_ = e.what();  // read only after join or by expect_unharmed's EXPECT
    }
  }

  TcpStoreClient client_;
  std::atomic<bool> stop_{false};
  std::atomic<int64_t> rounds_{0};
  std::string error_;
  std::thread thread_;
};

TEST(TcpStoreHostile, ACorrectRawClientIsServed) {
  // Proves the raw helper speaks the protocol, so the rejections below are
  // for the reasons the tests claim.
  TcpStoreServer server(server_options());
  RawClient raw(server.port());
  raw.handshake();
  auto sent = raw.send_request(wire::Request{});
  auto reply = raw.read_frame(2s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_TRUE(wire::frame_mac_valid(raw.keys().server_to_client, *reply));
  EXPECT_EQ(reply->header.status, StatusCode::kOk);
  EXPECT_EQ(reply->header.reply_to, sent.seq);
}

TEST(TcpStoreHostile, GarbageInsteadOfAHelloClosesOnlyThatConnection) {
  TcpStoreServer server(server_options());
  GoodNeighbour neighbour(server.port());
  RawClient raw(server.port());
  raw.send(Bytes(200, 0xAB));
  EXPECT_TRUE(raw.closed_within(2s));
  neighbour.expect_unharmed();
}

// A flood of bad connections is logged as one line per kind of problem
// per interval, not a line each (it was thousands of lines in seconds).
TEST(TcpStoreHostile, AFloodOfBadConnectionsIsLoggedOnceWithACount) {
  ::testing::internal::CaptureStderr();
  {
    TcpStoreServer server(server_options());
    for (int i = 0; i < 200; ++i) {
      RawClient raw(server.port());
      raw.send(Bytes(200, 0xAB));
      EXPECT_TRUE(raw.closed_within(2s));
    }
  }
  const std::string log = ::testing::internal::GetCapturedStderr();
  int lines = 0;
  for (size_t pos = log.find("rendezvous server: closing connection from");
       pos != std::string::npos;
       pos = log.find("rendezvous server: closing connection from", pos + 1))
    ++lines;
  EXPECT_GE(lines, 1) << log;
  EXPECT_LE(lines, 2) << log;  // 2 if the 200 took over the 5 s interval
}

TEST(TcpStoreHostile, GarbageAfterTheHandshakeIsAnsweredAndClosed) {
  TcpStoreServer server(server_options());
  GoodNeighbour neighbour(server.port());
  RawClient raw(server.port());
  raw.handshake();
  raw.send(Bytes(100, 0x5A));
  EXPECT_TRUE(raw.closed_within(2s));
  neighbour.expect_unharmed();
}

TEST(TcpStoreHostile, BadHmacGetsAnUnauthenticatedReplyThenClose) {
  TcpStoreServer server(server_options());
  GoodNeighbour neighbour(server.port());
  RawClient raw(server.port());
  raw.handshake("the-wrong-secret");
  wire::Request set;
  set.opcode = wire::Opcode::kSet;
  set.key = "neighbour";
  set.value = to_bytes("hijacked");
  raw.send_request(set);
  auto reply = raw.read_frame(2s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->header.status, StatusCode::kUnauthenticated);
  EXPECT_TRUE(raw.closed_within(3s));
  neighbour.expect_unharmed();
  TcpStoreClient check(client_options(server.port()));
  EXPECT_NE(check.get("neighbour"), to_bytes("hijacked"));
}

TEST(TcpStoreHostile, ReplayedFrameIsRejected) {
  TcpStoreServer server(server_options());
  RawClient raw(server.port());
  raw.handshake();
  wire::Request add;
  add.opcode = wire::Opcode::kAdd;
  add.key = "votes";
  add.delta = 1;
  Bytes frame = wire::encode_frame({add.opcode, StatusCode::kOk, 0, 0, 0},
                                   wire::encode_request(add), raw.keys().client_to_server);
  raw.send(frame);
  auto first = raw.read_frame(2s);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->header.status, StatusCode::kOk);
  raw.send(frame);  // the same bytes again: seq 0 is used up
  EXPECT_TRUE(raw.closed_within(3s));
  TcpStoreClient check(client_options(server.port()));
  EXPECT_EQ(check.get("votes"), to_bytes("1"));
}

TEST(TcpStoreHostile, FrameFromAnotherConnectionIsRejected) {
  TcpStoreServer server(server_options());
  RawClient recorded(server.port());
  recorded.handshake();
  wire::Request set;
  set.opcode = wire::Opcode::kSet;
  set.key = "k";
  set.value = to_bytes("replayed");
  Bytes frame = wire::encode_frame({set.opcode, StatusCode::kOk, 0, 0, 0},
                                   wire::encode_request(set), recorded.keys().client_to_server);
  RawClient replayer(server.port());
  replayer.handshake();  // fresh nonces, so fresh keys
  replayer.send(frame);
  auto reply = replayer.read_frame(2s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->header.status, StatusCode::kUnauthenticated);
  TcpStoreClient check(client_options(server.port()));
  EXPECT_EQ(check.get("k"), std::nullopt);
}

TEST(TcpStoreHostile, OversizedLengthIsRejectedBeforeThePayloadArrives) {
  auto options = server_options();
  options.max_frame_bytes = 1024;
  TcpStoreServer server(options);
  GoodNeighbour neighbour(server.port());
  RawClient raw(server.port());
  raw.handshake();
  // Only the header, claiming a ~4 GiB payload that is never sent: the
  // server must decide from the header alone.
  Bytes frame = wire::encode_frame({wire::Opcode::kSet, StatusCode::kOk, 0, 0, 0}, Bytes(8),
                                   raw.keys().client_to_server);
  Bytes header(frame.begin(), frame.begin() + wire::kHeaderBytes);
  header[24] = header[25] = header[26] = header[27] = 0xFF;
  raw.send(header);
  auto reply = raw.read_frame(2s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->header.status, StatusCode::kInvalidArgument);
  EXPECT_NE(std::string(reply->payload.begin(), reply->payload.end()).find("exceeds"),
            std::string::npos);
  EXPECT_TRUE(raw.closed_within(3s));
  neighbour.expect_unharmed();
}

TEST(TcpStoreHostile, SilentConnectionIsDroppedAfterTheHandshakeTimeout) {
  auto options = server_options();
  options.handshake_timeout = 200ms;
  TcpStoreServer server(options);
  GoodNeighbour neighbour(server.port());
  RawClient raw(server.port());  // reads the hello, never answers
  EXPECT_TRUE(raw.closed_within(3s));
  neighbour.expect_unharmed();
}

TEST(TcpStoreHostile, HelloWithoutAnAuthenticatedRequestIsDroppedAfterTheHandshakeTimeout) {
  auto options = server_options();
  options.handshake_timeout = 200ms;
  TcpStoreServer server(options);
  RawClient raw(server.port());
  raw.handshake();  // hello only; a stranger needs no secret for that much
  EXPECT_TRUE(raw.closed_within(3s));
  TcpStoreClient good(client_options(server.port()));  // pings at once, so it stays
  std::this_thread::sleep_for(400ms);
  EXPECT_NO_THROW(good.set("still", to_bytes("here")));
}

TEST(TcpStoreHostile, FirstFrameIsSmallUntilThePeerHasAuthenticated) {
  TcpStoreServer server(server_options());  // 64 MiB frames for authenticated clients
  RawClient raw(server.port());
  raw.handshake();
  wire::Request set;
  set.opcode = wire::Opcode::kSet;
  set.key = "k";
  set.value = Bytes(8192);
  raw.send_request(set);
  auto reply = raw.read_frame(2s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->header.status, StatusCode::kInvalidArgument);
  EXPECT_TRUE(raw.closed_within(3s));
  TcpStoreClient good(client_options(server.port()));
  good.set("k", Bytes(8192));
  EXPECT_EQ(good.get("k"), Bytes(8192));
}

TEST(TcpStoreHostile, AClientThatVanishesMidWaitLeavesTheServerHealthy) {
  TcpStoreServer server(server_options());
  GoodNeighbour neighbour(server.port());
  {
    RawClient raw(server.port());
    raw.handshake();
    wire::Request wait;
    wait.opcode = wire::Opcode::kWait;
    wait.keys = {"never-set"};
    wait.timeout_ms = 60'000;
    raw.send_request(wait);
    // A half-sent frame, then the socket closes.
    raw.send(Bytes{0x4B, 0x4F});
  }
  neighbour.expect_unharmed();
  TcpStoreClient late(client_options(server.port()));
  late.set("never-set", to_bytes("now"));  // wakes nobody; must not touch the dead connection
  neighbour.expect_unharmed();
}

TEST(TcpStoreHostile, UndecodablePayloadWithAValidMacIsAnsweredAndTheConnectionLives) {
  TcpStoreServer server(server_options());
  RawClient raw(server.port());
  raw.handshake();
  Bytes bad_payload = {0xFF, 0xFF, 0xFF, 0xFF};  // a GET whose key length lies
  raw.send(wire::encode_frame({wire::Opcode::kGet, StatusCode::kOk, 0, 0, 0}, bad_payload,
                              raw.keys().client_to_server));
  auto reply = raw.read_frame(2s);
  ASSERT_TRUE(reply.has_value());
  EXPECT_EQ(reply->header.status, StatusCode::kInvalidArgument);
  raw.send(wire::encode_frame({wire::Opcode::kPing, StatusCode::kOk, 1, 0, 0}, {},
                              raw.keys().client_to_server));
  auto pong = raw.read_frame(2s);
  ASSERT_TRUE(pong.has_value());
  EXPECT_EQ(pong->header.status, StatusCode::kOk);
  EXPECT_EQ(pong->header.reply_to, 1u);
}

}  // namespace
}  // namespace kolo::rendezvous
