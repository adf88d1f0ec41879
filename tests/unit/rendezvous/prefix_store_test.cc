#include "rendezvous/prefix_store.h"

#include <gtest/gtest.h>

#include "common/error.h"
#include "raw_store_peer.h"
#include "rendezvous/memory_store.h"

namespace kolo::rendezvous {
namespace {

using namespace std::chrono_literals;

void expect_isolated(std::shared_ptr<Store> base) {
  PrefixStore job_a("a", base);
  PrefixStore job_b("b", base);
  job_a.set("rank0", to_bytes("A"));
  job_b.set("rank0", to_bytes("B"));
  EXPECT_EQ(job_a.get("rank0"), to_bytes("A"));
  EXPECT_EQ(job_b.get("rank0"), to_bytes("B"));
  EXPECT_EQ(base->get("a/rank0"), to_bytes("A"));
  EXPECT_EQ(base->get("rank0"), std::nullopt);

  job_a.add("count", 3);
  EXPECT_EQ(job_b.get("count"), std::nullopt);
  EXPECT_TRUE(job_a.remove("rank0"));
  EXPECT_EQ(job_b.get("rank0"), to_bytes("B"));

  // A key in another scope does not satisfy a wait; the error names our key.
  try {
    job_b.wait({"count"}, 20ms);
    FAIL() << "expected TimeoutError";
  } catch (const TimeoutError& e) {
    EXPECT_NE(std::string(e.what()).find("'b/count'"), std::string::npos) << e.what();
  }

  PrefixStore nested("inner", std::make_shared<PrefixStore>("outer", base));
  nested.set("k", to_bytes("v"));
  EXPECT_EQ(base->get("outer/inner/k"), to_bytes("v"));
}

TEST(PrefixStore, ScopesAreIsolatedOverMemory) {
  expect_isolated(std::make_shared<MemoryStore>());
}

TEST(PrefixStore, ScopesAreIsolatedOverTcp) {
  TcpStoreServer server(testing::server_options());
  expect_isolated(std::make_shared<TcpStoreClient>(testing::client_options(server.port())));
}

TEST(PrefixStore, NeedsABaseStore) {
  EXPECT_THROW(PrefixStore("x", nullptr), InvalidArgument);
}

}  // namespace
}  // namespace kolo::rendezvous
