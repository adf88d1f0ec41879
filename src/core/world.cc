#include "core/world.h"

#include "backends/registry.h"
#include "core/launch/foreign_store.h"
#include "core/launch/host_layout.h"
#include "core/self_connected_world.h"
#include "rendezvous/memory_store.h"
#include "rendezvous/prefix_store.h"
#include "rendezvous/tcp_store_client.h"

namespace kolo {

std::shared_ptr<rendezvous::Store> connect_store(Config& config) {
  if (config.layout.size == 1 && config.rendezvous.address.empty())
    return std::make_shared<rendezvous::MemoryStore>();
  if (config.foreign_launcher && config.rendezvous.address.empty())
    return launch::connect_foreign_store(config);
  rendezvous::TcpStoreClientOptions options;
  options.host = config.rendezvous.address;
  options.port = static_cast<uint16_t>(config.rendezvous.port);
  options.secret = config.rendezvous.secret;
  options.connect_timeout = config.rendezvous.timeout;
  return std::make_shared<rendezvous::TcpStoreClient>(options);
}

std::unique_ptr<backends::Backend> connect_backend(rendezvous::Store& store, const Config& config) {
  return backends::create_backend(store, config.layout.rank, config.layout.size, config.settings,
                                  config.layout.cross_rank);
}

void complete_layout(rendezvous::Store& scoped, Config& config) {
  if (config.foreign_launcher) launch::complete_foreign_layout(scoped, config);
}

World connect_world(Config& config) {
  World world;
  if (backends::backend_connects_itself(config.settings, {})) {
    // MPI connects the ranks itself (and gives the layout); tools get a
    // store of their own.
    world.backend = connect_self_connected(config, {});
    world.store = std::make_shared<rendezvous::PrefixStore>(
        config.rendezvous.prefix, std::make_shared<rendezvous::MemoryStore>());
    return world;
  }
  world.store =
      std::make_shared<rendezvous::PrefixStore>(config.rendezvous.prefix, connect_store(config));
  complete_layout(*world.store, config);
  world.backend = connect_backend(*world.store, config);
  return world;
}

}  // namespace kolo
