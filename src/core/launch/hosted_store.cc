#include "core/launch/hosted_store.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/logging.h"
#include "rendezvous/tcp_store_client.h"
#include "rendezvous/tcp_store_server.h"

namespace kolo::launch {
namespace {

using std::chrono::milliseconds;

class ServerAndClient final : public HostedStore {
 public:
  ServerAndClient(std::unique_ptr<rendezvous::TcpStoreServer> server,
                  std::unique_ptr<rendezvous::Store> client, std::optional<RendezvousFile> file)
      : server_(std::move(server)), client_(std::move(client)), file_(std::move(file)) {}
  ~ServerAndClient() override {
    if (file_) file_->remove();
    client_.reset();
    server_.reset();
  }

  uint16_t port() const override { return server_->port(); }

  void set(const std::string& key, const rendezvous::Bytes& value) override {
    client_->set(key, value);
  }
  std::optional<rendezvous::Bytes> get(const std::string& key) override {
    return client_->get(key);
  }
  void wait(const std::vector<std::string>& keys, milliseconds timeout) override {
    client_->wait(keys, timeout);
  }
  int64_t add(const std::string& key, int64_t delta) override { return client_->add(key, delta); }
  rendezvous::CompareSetResult compare_set(const std::string& key,
                                           const std::optional<rendezvous::Bytes>& expected,
                                           const rendezvous::Bytes& desired) override {
    return client_->compare_set(key, expected, desired);
  }
  bool remove(const std::string& key) override { return client_->remove(key); }

 private:
  std::unique_ptr<rendezvous::TcpStoreServer> server_;
  std::unique_ptr<rendezvous::Store> client_;
  std::optional<RendezvousFile> file_;
};

}  // namespace

std::unique_ptr<rendezvous::Store> client_of(const StoreAddress& address, milliseconds timeout) {
  rendezvous::TcpStoreClientOptions options;
  options.host = address.host;
  options.port = address.port;
  options.secret = address.secret;
  options.connect_timeout = timeout;
  return std::make_unique<rendezvous::TcpStoreClient>(options);
}

std::shared_ptr<HostedStore> host_store(const std::string& bind_address, uint16_t port,
                                        const std::string& secret,
                                        std::optional<RendezvousFile> file, const Config& config) {
  rendezvous::TcpStoreServerOptions options;
  options.bind_address = bind_address;
  options.port = port;
  options.secret = secret;
  std::unique_ptr<rendezvous::TcpStoreServer> server;
  try {
    server = std::make_unique<rendezvous::TcpStoreServer>(options);
  } catch (const IoError& e) {
    throw IoError(fmt::format(
        "rank 0 could not host the job's rendezvous store on {}:{} ({}); set KOLO_RENDEZVOUS_PORT "
        "to a free port",
        bind_address, port, e.what()));
  }
  const StoreAddress own{"127.0.0.1", server->port(), secret};
  if (file) file->publish(own);
  KOLO_LOG_DEBUG("rank 0 hosts the rendezvous store on {}:{}", bind_address, server->port());
  auto client = client_of(own, config.rendezvous.timeout);
  return std::make_shared<ServerAndClient>(std::move(server), std::move(client), std::move(file));
}

}  // namespace kolo::launch
