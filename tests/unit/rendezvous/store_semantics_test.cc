// One behaviour, every Store: the same suite runs over MemoryStore,
// PrefixStore and TcpStoreClient (against a real TcpStoreServer).
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "common/error.h"
#include "raw_store_peer.h"
#include "rendezvous/memory_store.h"
#include "rendezvous/prefix_store.h"

namespace kolo::rendezvous {
namespace {

using namespace std::chrono_literals;
using testing::elapsed_ms;

// A store plus whatever keeps it alive (the server behind a TCP client).
struct Harness {
  std::shared_ptr<TcpStoreServer> server;
  std::shared_ptr<Store> store;
};

struct StoreKind {
  const char* name;
  Harness (*make)();
};
// Keeps ctest's test names readable (gtest would print the struct's bytes).
void PrintTo(const StoreKind& kind, std::ostream* os) {
  *os << kind.name;
}

Harness make_tcp() {
  auto server = std::make_shared<TcpStoreServer>(testing::server_options());
  return {server, std::make_shared<TcpStoreClient>(testing::client_options(server->port()))};
}

const StoreKind kKinds[] = {
    {"Memory",
     [] {
       return Harness{nullptr, std::make_shared<MemoryStore>()};
     }},
    {"Prefix",
     [] {
       return Harness{nullptr,
                      std::make_shared<PrefixStore>("job", std::make_shared<MemoryStore>())};
     }},
    {"Tcp", make_tcp},
    {"PrefixOverTcp",
     [] {
       Harness tcp = make_tcp();
       return Harness{tcp.server, std::make_shared<PrefixStore>("round3", tcp.store)};
     }},
};

class StoreSemantics : public ::testing::TestWithParam<StoreKind> {
 protected:
  void SetUp() override { harness_ = GetParam().make(); }
  Store& store() { return *harness_.store; }

  Harness harness_;
};

TEST_P(StoreSemantics, SetGetOverwriteAndAbsent) {
  EXPECT_EQ(store().get("missing"), std::nullopt);
  store().set("k", to_bytes("one"));
  EXPECT_EQ(store().get("k"), to_bytes("one"));
  store().set("k", to_bytes("two"));
  EXPECT_EQ(store().get("k"), to_bytes("two"));
}

TEST_P(StoreSemantics, WaitReturnsAtOnceWhenKeysExist) {
  store().set("a", to_bytes("1"));
  store().set("b", to_bytes("2"));
  auto start = std::chrono::steady_clock::now();
  store().wait({"a", "b"}, 5s);
  store().wait({"a"}, 0ms);
  EXPECT_LT(elapsed_ms(start), 1000);
  EXPECT_EQ(store().wait_get("b", 1s), to_bytes("2"));
}

TEST_P(StoreSemantics, WaitTimesOutNamingOnlyTheMissingKeys) {
  store().set("present", to_bytes("x"));
  auto start = std::chrono::steady_clock::now();
  try {
    store().wait({"present", "absent1", "absent2"}, 100ms);
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    std::string what = e.what();
    EXPECT_NE(what.find("absent1'"), std::string::npos) << what;
    EXPECT_NE(what.find("absent2'"), std::string::npos) << what;
    EXPECT_EQ(what.find("present'"), std::string::npos) << what;
  }
  EXPECT_GE(elapsed_ms(start), 90);
  EXPECT_LT(elapsed_ms(start), 3000);
}

TEST_P(StoreSemantics, ZeroTimeoutWaitOnAMissingKeyFailsAtOnce) {
  auto start = std::chrono::steady_clock::now();
  EXPECT_THROW(store().wait({"nope"}, 0ms), TimeoutError);
  EXPECT_LT(elapsed_ms(start), 1000);
}

TEST_P(StoreSemantics, WaitIsWokenByALaterSetFromAnotherThread) {
  std::thread setter([&] {
    std::this_thread::sleep_for(50ms);
    store().set("late", to_bytes("here"));
  });
  auto start = std::chrono::steady_clock::now();
  EXPECT_NO_THROW(store().wait({"late"}, 5s));
  EXPECT_LT(elapsed_ms(start), 4000);
  setter.join();
  EXPECT_EQ(store().get("late"), to_bytes("here"));
}

TEST_P(StoreSemantics, WaitIsWokenByAddAndCompareSet) {
  std::thread writer([&] {
    std::this_thread::sleep_for(30ms);
    store().add("counter", 1);
    std::this_thread::sleep_for(30ms);
    store().compare_set("flag", std::nullopt, to_bytes("up"));
  });
  EXPECT_NO_THROW(store().wait({"counter", "flag"}, 5s));
  writer.join();
}

TEST_P(StoreSemantics, ConcurrentAddsFromManyThreadsAreExact) {
  constexpr int kThreads = 8;
  constexpr int kAddsPerThread = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t)
    threads.emplace_back([&] {
      for (int i = 0; i < kAddsPerThread; ++i) store().add("total", 1);
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(store().add("total", 0), kThreads * kAddsPerThread);
  EXPECT_EQ(store().get("total"), to_bytes(std::to_string(kThreads * kAddsPerThread)));
}

TEST_P(StoreSemantics, AddStartsAtZeroAndStoresDecimalText) {
  EXPECT_EQ(store().add("n", 5), 5);
  EXPECT_EQ(store().add("n", -7), -2);
  EXPECT_EQ(store().get("n"), to_bytes("-2"));
  store().set("m", to_bytes("40"));
  EXPECT_EQ(store().add("m", 2), 42);
}

TEST_P(StoreSemantics, AddOnANonIntegerThrowsInvalidArgument) {
  store().set("text", to_bytes("hello"));
  EXPECT_THROW(store().add("text", 1), InvalidArgument);
  EXPECT_EQ(store().get("text"), to_bytes("hello"));
  EXPECT_EQ(store().add("fine", 1), 1);  // the store (and connection) still work
}

TEST_P(StoreSemantics, CompareSetOnAbsentMatchingAndMismatchingValues) {
  auto r = store().compare_set("cas", std::nullopt, to_bytes("v1"));
  EXPECT_TRUE(r.swapped);
  EXPECT_EQ(r.current, to_bytes("v1"));

  r = store().compare_set("cas", std::nullopt, to_bytes("v2"));  // expects absent, is present
  EXPECT_FALSE(r.swapped);
  EXPECT_EQ(r.current, to_bytes("v1"));

  r = store().compare_set("cas", to_bytes("wrong"), to_bytes("v2"));
  EXPECT_FALSE(r.swapped);
  EXPECT_EQ(r.current, to_bytes("v1"));

  r = store().compare_set("cas", to_bytes("v1"), to_bytes("v2"));
  EXPECT_TRUE(r.swapped);
  EXPECT_EQ(r.current, to_bytes("v2"));
  EXPECT_EQ(store().get("cas"), to_bytes("v2"));

  r = store().compare_set("other", to_bytes("x"), to_bytes("y"));  // expects a value, is absent
  EXPECT_FALSE(r.swapped);
  EXPECT_EQ(r.current, std::nullopt);
  EXPECT_EQ(store().get("other"), std::nullopt);
}

TEST_P(StoreSemantics, RemoveReportsWhetherTheKeyExisted) {
  store().set("gone", to_bytes("soon"));
  EXPECT_TRUE(store().remove("gone"));
  EXPECT_FALSE(store().remove("gone"));
  EXPECT_EQ(store().get("gone"), std::nullopt);
}

TEST_P(StoreSemantics, BinaryValuesAndKeysWithZeroBytesRoundTrip) {
  Bytes all(512);
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<uint8_t>(i);
  std::string key("bin\0key", 7);
  store().set(key, all);
  EXPECT_EQ(store().get(key), all);
  EXPECT_EQ(store().get("bin"), std::nullopt);
}

TEST_P(StoreSemantics, EmptyValueIsPresentNotAbsent) {
  store().set("empty", {});
  auto value = store().get("empty");
  ASSERT_TRUE(value.has_value());
  EXPECT_TRUE(value->empty());
  EXPECT_NO_THROW(store().wait({"empty"}, 0ms));
  auto r = store().compare_set("empty", Bytes{}, to_bytes("full"));
  EXPECT_TRUE(r.swapped);
}

TEST_P(StoreSemantics, LargeValueRoundTrips) {
  Bytes big(8 << 20);
  for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<uint8_t>(i * 131 + 7);
  store().set("big", big);
  EXPECT_EQ(store().get("big"), big);
}

INSTANTIATE_TEST_SUITE_P(AllStores, StoreSemantics, ::testing::ValuesIn(kKinds),
                         [](const auto& kind) { return std::string(kind.param.name); });

}  // namespace
}  // namespace kolo::rendezvous
