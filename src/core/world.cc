#include "core/world.h"

#include "rendezvous/memory_store.h"
#include "rendezvous/prefix_store.h"
#include "rendezvous/tcp_store_client.h"

namespace kolo {

backends::BackendOptions backend_options(const Config& config) {
  backends::BackendOptions options;
  options.name = config.engine.backend;
  options.tcp = config.tcp;
  options.shm = config.shm;
  options.collectives = config.collectives;
  options.host_index = config.layout.cross_rank;
  return options;
}

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
  world.backend = backends::create_backend(*world.store, config.layout.rank, config.layout.size,
                                          backend_options(config));
  return world;
}

}  // namespace kolo
