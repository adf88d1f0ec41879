#include "core/launch/foreign_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "common/check.h"
#include "common/error.h"
#include "common/logging.h"
#include "core/launch/rendezvous_file.h"
#include "rendezvous/store_auth.h"
#include "rendezvous/tcp_store_client.h"
#include "rendezvous/tcp_store_server.h"

namespace kolo::launch {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// Rank 0's store: the server, rank 0's own client of it, and the file that
// advertised it (removed first, so no rank reads an address about to die).
class HostedStore final : public rendezvous::Store {
 public:
  HostedStore(std::unique_ptr<rendezvous::TcpStoreServer> server,
              std::unique_ptr<rendezvous::TcpStoreClient> client,
              std::optional<RendezvousFile> file)
      : server_(std::move(server)), client_(std::move(client)), file_(std::move(file)) {}
  ~HostedStore() override {
    if (file_) file_->remove();
    client_.reset();
    server_.reset();
  }

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
  std::unique_ptr<rendezvous::TcpStoreClient> client_;
  std::optional<RendezvousFile> file_;
};

std::unique_ptr<rendezvous::TcpStoreClient> client_of(const StoreAddress& address,
                                                      milliseconds timeout) {
  rendezvous::TcpStoreClientOptions options;
  options.host = address.host;
  options.port = address.port;
  options.secret = address.secret;
  options.connect_timeout = timeout;
  return std::make_unique<rendezvous::TcpStoreClient>(options);
}

std::shared_ptr<rendezvous::Store> host_store(const std::string& bind_address, uint16_t port,
                                              const std::string& secret,
                                              std::optional<RendezvousFile> file,
                                              const Config& config) {
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
  if (file) file->publish({"127.0.0.1", server->port(), secret});
  KOLO_LOG_DEBUG("rank 0 hosts the rendezvous store on {}:{}", bind_address, server->port());
  auto client = client_of(own, config.rendezvous.timeout);
  return std::make_shared<HostedStore>(std::move(server), std::move(client), std::move(file));
}

// A rank other than 0 on rank 0's host: reads the file until rank 0 has
// written it and its store answers. A file left by an earlier job of the
// same key names a dead port or another secret: read it again.
std::shared_ptr<rendezvous::Store> find_local_store(const RendezvousFile& file,
                                                    const Config& config) {
  const auto deadline = Clock::now() + config.rendezvous.timeout;
  std::string last_error = "the file does not exist yet";
  while (Clock::now() < deadline) {
    if (auto address = file.read()) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      try {
        return client_of(*address, std::clamp(left, milliseconds(1), milliseconds(2000)));
      } catch (const Exception& e) {
        last_error = e.what();
      }
    }
    std::this_thread::sleep_for(milliseconds(20));
  }
  throw TimeoutError(fmt::format(
      "rank {} of {} (started by {}) did not find rank 0's rendezvous store within {} ms through "
      "{} ({}); is rank 0 running?",
      config.layout.rank, config.layout.size, config.foreign_launcher->name,
      config.rendezvous.timeout.count(), file.path().string(), last_error));
}

std::shared_ptr<rendezvous::Store> connect_on_one_host(const Config& config) {
  RendezvousFile file(config.settings.text("KOLO_RENDEZVOUS_DIR"),
                      config.foreign_launcher->job_key);
  if (config.layout.rank != 0) return find_local_store(file, config);
  const std::string secret =
      config.rendezvous.secret.empty() ? rendezvous::generate_secret() : config.rendezvous.secret;
  return host_store("127.0.0.1", 0, secret, std::move(file), config);
}

std::shared_ptr<rendezvous::Store> connect_across_hosts(const Config& config) {
  const ForeignLauncher& l = *config.foreign_launcher;
  const int port = config.rendezvous.port != 0 ? config.rendezvous.port : l.port_hint;
  if (l.rank0_host.empty() || port == 0) {
    throw InvalidArgument(fmt::format(
        "{} started {} ranks on several hosts but names no host and port where they can meet: "
        "start the job with kolorun (or horovodrun{}), or give every rank KOLO_RENDEZVOUS_ADDR "
        "and KOLO_RENDEZVOUS_PORT of a store kolorun hosts",
        l.name, l.size, l.mpi_launched ? " --mpi" : ""));
  }
  if (config.rendezvous.secret.empty())
    throw InvalidArgument(fmt::format(
        "{} started {} ranks on several hosts and has no private channel to share the job's "
        "secret: give every rank the same KOLO_SECRET (e.g. export KOLO_SECRET=$(openssl rand "
        "-hex 16) before starting the job)",
        l.name, l.size));
  if (config.layout.rank == 0)
    return host_store("0.0.0.0", static_cast<uint16_t>(port), config.rendezvous.secret,
                      std::nullopt, config);
  return client_of({l.rank0_host, static_cast<uint16_t>(port), config.rendezvous.secret},
                   config.rendezvous.timeout);
}

}  // namespace

std::shared_ptr<rendezvous::Store> connect_foreign_store(const Config& config) {
  const ForeignLauncher& l = *config.foreign_launcher;
  KOLO_CHECK(config.rendezvous.address.empty() && config.layout.size > 1);
  const bool one_host = l.local_size == l.size;
  return one_host ? connect_on_one_host(config) : connect_across_hosts(config);
}

}  // namespace kolo::launch
