// StripedContext on healthy meshes: how messages are cut, that every size
// around the cut points arrives intact, and that one tag between a pair
// keeps its send order when small (one stream) and large (all streams)
// messages mix.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <thread>
#include <vector>

#include "common/error.h"
#include "striped_mesh.h"

namespace kolo::transport {
namespace {

using kolo::testing::Contexts;
using kolo::testing::kTestStripeBytes;
using kolo::testing::make_striped_mesh;
using kolo::testing::run_ranks;
using kolo::testing::run_threads;
using kolo::testing::striped_options;

constexpr size_t kMinPart = StripeLayout::kMinPartBytes;

// Bytes that differ per (source, destination, message, position).
std::vector<uint8_t> pattern(size_t bytes, int src, int dst, uint64_t salt = 0) {
  std::vector<uint8_t> out(bytes);
  for (size_t i = 0; i < bytes; ++i)
    out[i] = static_cast<uint8_t>(i * 31 + src * 7 + dst * 13 + (i >> 11) + salt * 101);
  return out;
}

// The parts tile [0, bytes) in order, none empty (except a lone part of an
// empty message), and respect the stream count and the minimum part size.
void expect_valid_layout(size_t bytes, size_t streams, size_t threshold) {
  const StripeLayout layout(bytes, streams, threshold);
  const std::string what =
      fmt::format("bytes={} streams={} threshold={}", bytes, streams, threshold);
  ASSERT_GE(layout.parts(), 1u) << what;
  EXPECT_LE(layout.parts(), streams) << what;
  if (bytes < threshold) {
    EXPECT_EQ(layout.parts(), 1u) << what;
  }
  size_t next = 0;
  for (size_t i = 0; i < layout.parts(); ++i) {
    EXPECT_EQ(layout.offset(i), next) << what << " part " << i;
    if (layout.parts() > 1) {
      EXPECT_GE(layout.size(i), i + 1 < layout.parts() ? kMinPart : 1) << what << " part " << i;
      EXPECT_EQ(layout.offset(i) % StripeLayout::kAlign, 0u) << what << " part " << i;
    }
    next += layout.size(i);
  }
  EXPECT_EQ(next, bytes) << what;
}

TEST(StripeLayout, PartsTileTheMessage) {
  for (size_t streams : {1, 2, 3, 4, 7, 16})
    for (size_t threshold : {size_t{0}, size_t{1}, size_t{4096}, kTestStripeBytes, size_t{1} << 20})
      for (size_t bytes :
           {size_t{0}, size_t{1}, threshold - 1, threshold, threshold + 1, kMinPart * 2 - 1,
            kMinPart * 2, kMinPart * 2 + 1, size_t{1000003}, size_t{7} << 20})
        if (bytes != SIZE_MAX) {
          expect_valid_layout(bytes, streams, threshold);
        }
}

TEST(StripeLayout, CutsAtTheThresholdAndKeepsPartsAboveTheMinimum) {
  EXPECT_EQ(StripeLayout(1 << 20, 4, 1 << 20).parts(), 4u);
  EXPECT_EQ(StripeLayout((1 << 20) - 1, 4, 1 << 20).parts(), 1u);
  EXPECT_EQ(StripeLayout(1 << 20, 4, 1 << 20).size(0), 256u << 10);
  // Mid sizes get fewer, bigger parts.
  EXPECT_EQ(StripeLayout(3 * kMinPart - 1, 8, 0).parts(), 2u);
  EXPECT_EQ(StripeLayout(kMinPart * 2 - 1, 8, 0).parts(), 1u);
  EXPECT_EQ(StripeLayout(1 << 30, 1, 0).parts(), 1u);
  // An odd size: equal 64-byte-aligned parts, the last one shorter.
  const StripeLayout odd(1000003, 3, 0);
  EXPECT_EQ(odd.parts(), 3u);
  EXPECT_EQ(odd.size(0), 333376u);
  EXPECT_EQ(odd.size(2), 1000003u - 2 * 333376u);
}

TEST(StripedContext, FactoryPicksThePlainMeshForOneStream) {
  auto plain = make_striped_mesh(2, striped_options(1));
  EXPECT_EQ(dynamic_cast<StripedContext*>(plain[0].get()), nullptr);
  auto striped = make_striped_mesh(2, striped_options(3));
  auto* context = dynamic_cast<StripedContext*>(striped[1].get());
  ASSERT_NE(context, nullptr);
  EXPECT_EQ(context->stream_count(), 3u);
  EXPECT_EQ(context->rank(), 1);
  EXPECT_EQ(context->size(), 2);
  EXPECT_NE(context->peer_name(0).find("rank 0 (host "), std::string::npos)
      << context->peer_name(0);
  // A world of one rank needs no second stream.
  auto single = make_striped_mesh(1, striped_options(4));
  EXPECT_EQ(dynamic_cast<StripedContext*>(single[0].get()), nullptr);
}

TEST(StripedContext, RanksWithDifferentStripingAreRejected) {
  rendezvous::MemoryStore store;
  std::string what;
  run_threads(2, [&](int rank) {
    // Rank 0, with one stream, is done after the first mesh; rank 1 finds
    // the difference right after it.
    auto options = striped_options(rank == 0 ? 1 : 3);
    if (rank == 0) {
      auto context = tcp::connect(store, rank, 2, options);
      return;
    }
    try {
      auto context = tcp::connect(store, rank, 2, options);
      ADD_FAILURE() << "rank 1 connected with a different stream count";
    } catch (const InvalidArgument& e) {
      what = e.what();
    }
  });
  EXPECT_NE(what.find("rank 1 has KOLO_TCP_STREAMS=3 KOLO_TCP_STRIPE_BYTES=300000"),
            std::string::npos)
      << what;
  EXPECT_NE(what.find("rank 0 has KOLO_TCP_STREAMS=1"), std::string::npos) << what;
}

class StripedSizes : public ::testing::TestWithParam<int> {};

// Both directions at once, every size around the cut points, send or
// receive posted first (the late receive takes the unexpected path).
TEST_P(StripedSizes, EverySizeArrivesIntact) {
  const int streams = GetParam();
  auto mesh = make_striped_mesh(2, striped_options(streams));
  const size_t t = kTestStripeBytes;
  const std::vector<size_t> sizes = {0,
                                     1,
                                     t - 1,
                                     t,
                                     t + 1,
                                     2 * kMinPart - 1,
                                     2 * kMinPart + 1,
                                     64 * kMinPart + 17,
                                     1000003,
                                     (5u << 20) + 3};
  run_ranks(mesh, [&](Context& ctx) {
    const int other = 1 - ctx.rank();
    Tag tag = 100;
    for (size_t bytes : sizes) {
      for (bool send_first : {true, false}) {
        ++tag;
        auto out = pattern(bytes, ctx.rank(), other, tag);
        std::vector<uint8_t> in(bytes, 0xee);
        std::unique_ptr<Request> send, recv;
        if (send_first) send = ctx.isend(other, tag, out.data(), bytes);
        recv = ctx.irecv(other, tag, in.data(), bytes);
        if (!send_first) send = ctx.isend(other, tag, out.data(), bytes);
        recv->wait();
        send->wait();
        EXPECT_TRUE(in == pattern(bytes, other, ctx.rank(), tag))
            << bytes << " bytes, send first " << send_first;
      }
    }
  });
}

INSTANTIATE_TEST_SUITE_P(Streams, StripedSizes, ::testing::Values(1, 2, 3, 4));

// Messages to oneself are cut like any other.
TEST(StripedContext, SendToSelf) {
  auto mesh = make_striped_mesh(2, striped_options(3));
  Context& ctx = *mesh[0];
  auto out = pattern(300001, 0, 0);
  std::vector<uint8_t> in(out.size());
  auto send = ctx.isend(0, 5, out.data(), out.size());
  ctx.recv(0, 5, in.data(), in.size());
  send->wait();
  EXPECT_EQ(in, out);
}

// One tag between a pair, small (stream 0 only) and large (every stream)
// messages interleaved: they arrive in send order, whether the receives are
// posted before the sends or after the data has arrived.
TEST(StripedContext, SameTagKeepsSendOrderAcrossSizes) {
  auto mesh = make_striped_mesh(2, striped_options(4));
  const std::vector<size_t> sizes = {10,     200000, 0,  kTestStripeBytes, kTestStripeBytes - 1,
                                     777777, 3,      65, 2 * kMinPart,     1 << 20,
                                     1,      300001, 7,  3 * kMinPart + 5, (3u << 20) + 1};
  for (bool receives_first : {true, false}) {
    run_ranks(mesh, [&](Context& ctx) {
      const Tag tag = receives_first ? 7 : 8;
      if (ctx.rank() == 0) {
        // Receives first: give rank 1 time to post them all.
        if (receives_first) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        std::vector<std::vector<uint8_t>> out;
        std::vector<std::unique_ptr<Request>> sends;
        for (size_t i = 0; i < sizes.size(); ++i) out.push_back(pattern(sizes[i], 0, 1, i));
        for (size_t i = 0; i < sizes.size(); ++i)
          sends.push_back(ctx.isend(1, tag, out[i].data(), sizes[i]));
        for (auto& s : sends) s->wait();
      } else {
        // Sends first: give the whole sequence time to land unexpected.
        if (!receives_first) std::this_thread::sleep_for(std::chrono::milliseconds(200));
        std::vector<std::vector<uint8_t>> in;
        std::vector<std::unique_ptr<Request>> recvs;
        for (size_t bytes : sizes) in.emplace_back(bytes, 0xee);
        for (size_t i = 0; i < sizes.size(); ++i)
          recvs.push_back(ctx.irecv(0, tag, in[i].data(), sizes[i]));
        for (auto& r : recvs) r->wait();
        for (size_t i = 0; i < sizes.size(); ++i)
          EXPECT_TRUE(in[i] == pattern(sizes[i], 0, 1, i))
              << "message " << i << " of " << sizes[i] << " bytes";
      }
    });
  }
}

// Every rank exchanges many tags with every peer at once, sizes mixed, the
// receives posted in one order and the sends in the reverse.
TEST(StripedContext, ManyConcurrentTags) {
  constexpr int kRanks = 3;
  constexpr int kTags = 30;
  auto mesh = make_striped_mesh(kRanks, striped_options(3));
  auto bytes_of = [](int tag) -> size_t {
    return tag % 3 == 0 ? 400000 + tag : tag % 3 == 1 ? tag : 40000 + tag;
  };
  run_ranks(mesh, [&](Context& ctx) {
    const int me = ctx.rank();
    std::vector<std::vector<uint8_t>> in, out;
    std::vector<std::unique_ptr<Request>> requests;
    for (int peer = 0; peer < kRanks; ++peer)
      for (int tag = 0; tag < kTags; ++tag) {
        in.emplace_back(bytes_of(tag));
        out.push_back(pattern(bytes_of(tag), me, peer, tag));
      }
    for (int i = 0; i < kRanks * kTags; ++i)
      requests.push_back(
          ctx.irecv(i / kTags, static_cast<Tag>(i % kTags), in[i].data(), in[i].size()));
    for (int i = kRanks * kTags - 1; i >= 0; --i)
      requests.push_back(
          ctx.isend(i / kTags, static_cast<Tag>(i % kTags), out[i].data(), out[i].size()));
    for (auto& r : requests) r->wait();
    for (int i = 0; i < kRanks * kTags; ++i)
      EXPECT_TRUE(in[i] == pattern(in[i].size(), i / kTags, me, i % kTags))
          << "from " << i / kTags << " tag " << i % kTags;
  });
}

// test() turns true only once every part has arrived.
TEST(StripedContext, TestWaitsForEveryPart) {
  auto mesh = make_striped_mesh(2, striped_options(4));
  std::vector<uint8_t> in(1 << 20);
  auto out = pattern(in.size(), 1, 0);
  auto recv = mesh[0]->irecv(1, 3, in.data(), in.size());
  EXPECT_FALSE(recv->test());
  auto send = mesh[1]->isend(0, 3, out.data(), out.size());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!recv->test()) {
    ASSERT_LT(std::chrono::steady_clock::now(), deadline);
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
  EXPECT_EQ(in, out);
  send->wait();
}

}  // namespace
}  // namespace kolo::transport
