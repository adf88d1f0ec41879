// The NCCL unique id handed from a communicator's rank 0 to its other
// members through a real store (ranks as threads), without NCCL.
#include "gpu/nccl_id_exchange.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <thread>
#include <vector>

#include "common/error.h"
#include "rendezvous/memory_store.h"

namespace kolo::gpu {
namespace {

using std::chrono::milliseconds;

std::string random_id(uint32_t seed) {
  std::mt19937 gen(seed);
  std::string id(kNcclUniqueIdBytes, '\0');
  for (char& c : id) c = static_cast<char>(gen() & 0xff);
  return id;
}

TEST(NcclIdExchange, EveryRankGetsRankZerosId) {
  rendezvous::MemoryStore store;
  constexpr int kRanks = 4;
  const std::string key = nccl_id_key(0, 1);
  std::vector<std::string> got(kRanks);
  std::atomic<int> made{0};
  std::vector<std::thread> ranks;
  // The readers start first: they must wait for the id, not read nothing.
  for (int rank = kRanks - 1; rank >= 0; --rank) {
    ranks.emplace_back([&, rank] {
      got[rank] = exchange_nccl_id(
          store, key, rank,
          [&] {
            ++made;
            return random_id(7);
          },
          milliseconds(10000));
    });
  }
  for (std::thread& t : ranks) t.join();
  EXPECT_EQ(made.load(), 1);  // only rank 0 asks NCCL for an id
  for (const std::string& id : got) EXPECT_EQ(id, random_id(7));
}

TEST(NcclIdExchange, KeysDifferPerProcessSetAndGeneration) {
  EXPECT_EQ(nccl_id_key(0, 1), "nccl_id/0/1");
  EXPECT_NE(nccl_id_key(0, 1), nccl_id_key(1, 1));
  EXPECT_NE(nccl_id_key(0, 1), nccl_id_key(0, 2));
  // Two process sets exchanging at once each get their own id.
  rendezvous::MemoryStore store;
  exchange_nccl_id(
      store, nccl_id_key(0, 1), 0, [] { return random_id(1); }, milliseconds(100));
  exchange_nccl_id(
      store, nccl_id_key(3, 1), 0, [] { return random_id(2); }, milliseconds(100));
  auto never = []() -> std::string { throw InternalError("only rank 0 makes an id"); };
  EXPECT_EQ(exchange_nccl_id(store, nccl_id_key(0, 1), 1, never, milliseconds(100)), random_id(1));
  EXPECT_EQ(exchange_nccl_id(store, nccl_id_key(3, 1), 2, never, milliseconds(100)), random_id(2));
}

TEST(NcclIdExchange, AMissingFirstRankTimesOutNamingTheKey) {
  rendezvous::MemoryStore store;
  try {
    exchange_nccl_id(
        store, nccl_id_key(2, 5), 1, [] { return random_id(0); }, milliseconds(50));
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("nccl_id/2/5"), std::string::npos) << e.what();
  }
}

TEST(NcclIdExchange, RefusesAnIdOfTheWrongSize) {
  rendezvous::MemoryStore store;
  EXPECT_THROW(exchange_nccl_id(
                   store, "k", 0, [] { return std::string(5, 'x'); }, milliseconds(50)),
               InvalidArgument);
  EXPECT_FALSE(store.get("k").has_value());  // nothing was published
  store.set("k2", rendezvous::to_bytes("short"));
  try {
    exchange_nccl_id(
        store, "k2", 1, [] { return std::string(); }, milliseconds(50));
    FAIL() << "expected InvalidArgument";
  } catch (const InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()),
              "NCCL unique id under 'k2' from the store has 5 bytes, not 128");
  }
}

}  // namespace
}  // namespace kolo::gpu
