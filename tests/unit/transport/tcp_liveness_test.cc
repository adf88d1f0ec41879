// Peer liveness: a peer that stops answering is declared lost after the peer
// timeout (naming it), long before the operation timeout; a quiet but live
// peer never is, because heartbeats keep its connection talking.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "common/errno_text.h"
#include "common/error.h"
#include "support/tcp_mesh.h"
#include "transport/tcp/socket.h"
#include "transport/tcp/wire.h"

namespace kolo::transport {
namespace {

using namespace std::chrono_literals;
using kolo::testing::loopback_tcp_options;
using kolo::testing::make_tcp_mesh;
using kolo::testing::run_threads;
using tcp::Clock;

// Plays rank 1 of a 2-rank mesh by hand: publishes its keys, connects to
// rank 0 and completes the hello exactly as bootstrap.cc does, then never
// sends another byte - what a SIGSTOPped process looks like from outside,
// but deterministic. It can still read what rank 0 sends it.
class SilentPeer {
 public:
  explicit SilentPeer(rendezvous::Store& store) {
    const uint64_t nonce = 0x5157e47;
    store.set("tcp/meta/1", rendezvous::to_bytes(fmt::format("{:x} silenthost", nonce)));
    store.set("tcp/addr/1",
              rendezvous::to_bytes("127.0.0.1:9"));  // never dialled: rank 1 is the highest
    std::string addr = rendezvous::to_string(store.wait_get("tcp/addr/0", 10s));
    std::string meta = rendezvous::to_string(store.wait_get("tcp/meta/0", 10s));
    const auto deadline = Clock::now() + 10s;
    int err = 0;
    fd_ = tcp::try_connect(addr.substr(0, addr.rfind(':')),
                           std::stoi(addr.substr(addr.rfind(':') + 1)), 0, "", deadline, &err);
    if (!fd_.valid()) throw IoError("silent peer: connect: " + kolo::errno_text(err));
    tcp::Hello hello;
    hello.acceptor_nonce = std::stoull(meta.substr(0, meta.find(' ')), nullptr, 16);
    hello.connector_nonce = nonce;
    hello.connector_rank = 1;
    hello.size = 2;
    tcp::HelloReply reply;
    if (!tcp::write_all_until(fd_.get(), &hello, sizeof(hello), deadline, &err) ||
        !tcp::read_all_until(fd_.get(), &reply, sizeof(reply), deadline, &err) ||
        reply.magic != tcp::HelloReply::kMagic)
      throw IoError("silent peer: hello failed: " + tcp::connection_error_text(err));
  }

  struct Frame {
    tcp::FrameKind kind;
    std::string body;
  };

  // The next frame rank 0 sends, or nullopt at the deadline or EOF.
  std::optional<Frame> read_frame(Clock::time_point deadline) {
    tcp::FrameHeader header;
    uint64_t trailer = 0;
    int err = 0;
    if (!tcp::read_all_until(fd_.get(), &header, sizeof(header), deadline, &err))
      return std::nullopt;
    std::string body(header.length, '\0');
    if (!tcp::read_all_until(fd_.get(), body.data(), body.size(), deadline, &err) ||
        !tcp::read_all_until(fd_.get(), &trailer, sizeof(trailer), deadline, &err))
      return std::nullopt;
    EXPECT_EQ(header.magic, tcp::FrameHeader::kMagic);
    EXPECT_EQ(trailer, tcp::kTrailerCommit);
    return Frame{header.kind, std::move(body)};
  }

 private:
  UniqueFd fd_;
};

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(TcpLiveness, SilentPeerIsLostAfterThePeerTimeoutNotTheOperationTimeout) {
  rendezvous::MemoryStore store;
  auto options = loopback_tcp_options(20s);
  options.peer_timeout = 600ms;
  options.heartbeat = 100ms;
  std::unique_ptr<Context> ctx;
  std::optional<SilentPeer> silent;
  // Both halves of the handshake bound their waits (10 s); join before
  // reporting either's failure.
  run_threads(2, [&](int rank) {
    if (rank == 0)
      ctx = tcp::connect_full_mesh(store, 0, 2, options);
    else
      silent.emplace(store);
  });

  int heartbeats = 0;
  std::string abort_reason;
  std::thread listener([&] {
    // Rank 0 keeps the idle connection alive, then tells its silent peer why
    // it gave up.
    const auto deadline = Clock::now() + 10s;
    while (auto frame = silent->read_frame(deadline)) {
      if (frame->kind == tcp::FrameKind::kHeartbeat) ++heartbeats;
      if (frame->kind == tcp::FrameKind::kAbort) {
        abort_reason = frame->body;
        break;
      }
    }
  });

  char buffer[4];
  auto recv = ctx->irecv(1, 5, buffer, sizeof(buffer));
  const auto start = Clock::now();
  std::string what;
  try {
    recv->wait();
    ADD_FAILURE() << "a receive from a silent peer succeeded";
  } catch (const PeerLostError& e) {
    what = e.what();
  }
  const auto took = Clock::now() - start;
  listener.join();

  EXPECT_TRUE(contains(what, "rank 1 (host silenthost) stopped answering: nothing received for "))
      << what;
  EXPECT_TRUE(contains(what, "receive tag 5")) << what;
  EXPECT_GE(took, 500ms);
  EXPECT_LT(took, 5s) << "caught by the operation timeout instead of the peer timeout";
  EXPECT_GE(heartbeats, 2);
  EXPECT_TRUE(contains(abort_reason, "stopped answering")) << abort_reason;
  // The context stays poisoned with the same root cause.
  try {
    ctx->send(1, 6, buffer, sizeof(buffer));
    ADD_FAILURE() << "send on a poisoned context succeeded";
  } catch (const Error& e) {
    EXPECT_TRUE(contains(e.what(), "rank 1 (host silenthost) stopped answering")) << e.what();
  }
}

// A peer that sends nothing for several peer timeouts is still alive: its
// progress thread heartbeats while its caller is busy elsewhere. A beat
// interval longer than the timeout allows is cut to a third of it.
TEST(TcpLiveness, QuietLivePeerIsNotLost) {
  auto options = loopback_tcp_options();
  options.peer_timeout = 500ms;
  options.heartbeat = 10s;
  auto mesh = make_tcp_mesh(2, options);
  run_threads(2, [&](int rank) {
    Context& ctx = *mesh[rank];
    int value = rank + 10, got = -1;
    if (rank == 1) std::this_thread::sleep_for(2s);
    auto sent = ctx.isend(1 - rank, 3, &value, sizeof(value));
    ctx.recv(1 - rank, 3, &got, sizeof(got));
    sent->wait();
    EXPECT_EQ(got, 11 - rank);
  });
}

// Heartbeats interleave with data frames of every size, including ones the
// socket takes in many writes; none may land inside another frame.
TEST(TcpLiveness, HeartbeatsNeverSplitDataFrames) {
  auto options = loopback_tcp_options();
  options.peer_timeout = 600ms;
  options.heartbeat = 100ms;
  auto mesh = make_tcp_mesh(2, options);
  run_threads(2, [&](int rank) {
    Context& ctx = *mesh[rank];
    const int peer = 1 - rank;
    for (int i = 0; i < 24; ++i) {
      const size_t bytes = (i % 3 == 0) ? (4u << 20) + 7 : static_cast<size_t>(i) * 131;
      std::vector<uint8_t> out(bytes), in(bytes);
      for (size_t b = 0; b < bytes; ++b) out[b] = static_cast<uint8_t>(b * 7 + i + rank);
      auto sent = ctx.isend(peer, static_cast<Tag>(i), out.data(), bytes);
      ctx.recv(peer, static_cast<Tag>(i), in.data(), bytes);
      sent->wait();
      for (size_t b = 0; b < bytes; ++b)
        if (in[b] != static_cast<uint8_t>(b * 7 + i + peer)) {
          ADD_FAILURE() << "message " << i << " corrupt at byte " << b;
          break;
        }
      // Pauses around the heartbeat interval, so heartbeats fall between frames.
      std::this_thread::sleep_for(std::chrono::milliseconds((i % 4) * 45));
    }
  });
}

}  // namespace
}  // namespace kolo::transport
