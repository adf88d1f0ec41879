#include "core/launch/foreign_store.h"

#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "common/check.h"
#include "common/error.h"
#include "common/logging.h"
#include "core/launch/hosted_store.h"
#include "core/launch/rendezvous_file.h"
#include "core/launch/store_over_mpi.h"
#include "rendezvous/store_auth.h"

namespace kolo::launch {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

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

// Why MPI could not carry the rendezvous, for the errors below; empty when
// the launcher is no MPI launcher.
std::string mpi_note(const std::string& why_not) {
  return why_not.empty() ? "" : fmt::format(" (MPI could not carry it: {})", why_not);
}

std::shared_ptr<rendezvous::Store> connect_across_hosts(Config& config) {
  const ForeignLauncher& l = *config.foreign_launcher;
  std::string mpi_unusable;
  if (l.mpi_launched) {
    if (auto store = connect_store_over_mpi(config, &mpi_unusable)) return store;
  }
  const int port = config.rendezvous.port != 0 ? config.rendezvous.port : l.port_hint;
  if (l.rank0_host.empty() || port == 0) {
    throw InvalidArgument(fmt::format(
        "{} started {} ranks on several hosts but names no host and port where they can meet{}: "
        "start the job with kolorun (or horovodrun{}), or give every rank KOLO_RENDEZVOUS_ADDR "
        "and KOLO_RENDEZVOUS_PORT of a store kolorun hosts",
        l.name, l.size, mpi_note(mpi_unusable), l.mpi_launched ? " --mpi" : ""));
  }
  if (config.rendezvous.secret.empty())
    throw InvalidArgument(fmt::format(
        "{} started {} ranks on several hosts and has no private channel to share the job's "
        "secret{}: give every rank the same KOLO_SECRET (e.g. export KOLO_SECRET=$(openssl rand "
        "-hex 16) before starting the job)",
        l.name, l.size, mpi_note(mpi_unusable)));
  if (config.layout.rank == 0)
    return host_store("0.0.0.0", static_cast<uint16_t>(port), config.rendezvous.secret,
                      std::nullopt, config);
  return client_of({l.rank0_host, static_cast<uint16_t>(port), config.rendezvous.secret},
                   config.rendezvous.timeout);
}

}  // namespace

std::shared_ptr<rendezvous::Store> connect_foreign_store(Config& config) {
  const ForeignLauncher& l = *config.foreign_launcher;
  KOLO_CHECK(config.rendezvous.address.empty() && config.layout.size > 1);
  const bool one_host = l.local_size == l.size;
  return one_host ? connect_on_one_host(config) : connect_across_hosts(config);
}

}  // namespace kolo::launch
