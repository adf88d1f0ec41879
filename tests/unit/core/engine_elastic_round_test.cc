// An elastic worker meeting the peers of its round: when kolorun gives the
// round up (a member died a moment after it was placed, before it published
// its address), the survivors' start ends at once with the driver's reason
// instead of waiting the whole start timeout for that address.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "common/error.h"
#include "rendezvous/elastic_protocol.h"
#include "rendezvous/memory_store.h"
#include "support/engine_ranks.h"

namespace kolo::core {
namespace {

using namespace std::chrono_literals;
namespace protocol = rendezvous::elastic;

TEST(EngineElasticRound, AGivenUpRoundEndsTheStartWithTheDriversReason) {
  auto store = std::make_shared<rendezvous::MemoryStore>();
  // The driver placed workers 0 and 1 in round 1; worker 1 then died, so only
  // worker 0 starts an engine.
  protocol::Assignment placed;
  placed.round = 1;
  placed.rank = 0;
  placed.size = 2;
  placed.local_size = 2;
  placed.host = "localhost";
  store->set(protocol::assignment_key("0", 1),
             rendezvous::to_bytes(protocol::encode_assignment(placed)));

  Config config = testing::engine_config(0, 2);
  config.elastic.enabled = true;
  config.elastic.worker_id = "0";
  config.elastic.join_timeout = 10s;
  config.settings.set("KOLO_START_TIMEOUT", "30");
  EngineOptions options;
  options.store = store;

  const std::string reason = "kolorun gave round 1 up: worker 1 (rank 1, host localhost) failed";
  std::thread driver([&] {
    std::this_thread::sleep_for(300ms);
    store->set(protocol::round_over_key(1), rendezvous::to_bytes(reason));
  });
  const auto started = std::chrono::steady_clock::now();
  try {
    Engine engine(config, std::move(options));
    ADD_FAILURE() << "the engine started in a round without its second member";
  } catch (const AbortedError& e) {
    EXPECT_EQ(std::string(e.what()), reason);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "expected the driver's reason, got: " << e.what();
  }
  const auto took = std::chrono::steady_clock::now() - started;
  EXPECT_LT(took, 5s) << "the start waited for the timeout instead of the driver's notice";
  driver.join();
}

}  // namespace
}  // namespace kolo::core
