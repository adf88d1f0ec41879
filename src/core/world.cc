#include "core/world.h"

#include "rendezvous/memory_store.h"
#include "rendezvous/prefix_store.h"
#include "rendezvous/tcp_store_client.h"
#include "transport/tcp/tcp_context.h"

namespace kolo {

World connect_world(const Config& config) {
  std::shared_ptr<rendezvous::Store> base;
  if (config.layout.size == 1 && config.rendezvous.address.empty()) {
    base = std::make_shared<rendezvous::MemoryStore>();
  } else {
    rendezvous::TcpStoreClientOptions options;
    options.host = config.rendezvous.address;
    options.port = static_cast<uint16_t>(config.rendezvous.port);
    options.secret = config.rendezvous.secret;
    options.connect_timeout = config.rendezvous.timeout;
    base = std::make_shared<rendezvous::TcpStoreClient>(options);
  }
  World world;
  world.store = std::make_shared<rendezvous::PrefixStore>(config.rendezvous.prefix, base);
  world.context = transport::tcp::connect_full_mesh(*world.store, config.layout.rank,
                                                    config.layout.size, config.tcp);
  return world;
}

}  // namespace kolo
