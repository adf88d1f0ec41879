#include "core/launch/store_over_mpi.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <thread>

#include "backends/mpi_runtime.h"
#include "common/error.h"
#include "common/logging.h"
#include "common/net_interfaces.h"
#include "rendezvous/store_auth.h"

namespace kolo::launch {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

// One try at one address: long enough for a store across a network to
// answer, short enough that an address nobody can reach (a network rank 0
// has and this host has not) costs little before the next one.
constexpr milliseconds kTryLimit{2000};

std::string started_by(const Config& config) {
  return config.foreign_launcher ? config.foreign_launcher->name : "an MPI launcher";
}

}  // namespace

OfferedStore offer_store(const Config& config, const std::vector<std::string>& addresses) {
  const bool users_secret = !config.rendezvous.secret.empty();
  const std::string secret =
      users_secret ? config.rendezvous.secret : rendezvous::generate_secret();
  OfferedStore offered;
  offered.store = host_store("0.0.0.0", static_cast<uint16_t>(config.rendezvous.port), secret,
                             std::nullopt, config);
  offered.offer.addresses = addresses;
  offered.offer.port = offered.store->port();
  // The user's secret is on every rank already; only a fresh one travels.
  if (!users_secret) offered.offer.secret = secret;
  return offered;
}

std::shared_ptr<rendezvous::Store> connect_to_offer(const Config& config, const StoreOffer& offer,
                                                    std::string* reached) {
  const int rank = config.layout.rank;
  if (!offer.error.empty())
    throw IoError(
        fmt::format("rank 0 could not offer the job's rendezvous store: {}", offer.error));
  const std::string secret = offer.secret.empty() ? config.rendezvous.secret : offer.secret;
  if (secret.empty())
    throw InvalidArgument(fmt::format(
        "rank 0 uses the KOLO_SECRET it was given, but rank {} has none: give every rank the same "
        "KOLO_SECRET, or none",
        rank));
  const auto deadline = Clock::now() + config.rendezvous.timeout;
  std::map<std::string, std::string> last_error;  // address -> why it did not answer
  do {
    for (const std::string& address : offer.addresses) {
      const auto left = std::chrono::duration_cast<milliseconds>(deadline - Clock::now());
      try {
        auto store =
            client_of({address, offer.port, secret}, std::clamp(left, milliseconds(1), kTryLimit));
        KOLO_LOG_DEBUG("rank {} reached rank 0's rendezvous store at {}:{}", rank, address,
                       offer.port);
        if (reached != nullptr) *reached = address;
        return store;
      } catch (const Exception& e) {
        last_error[address] = e.what();
      }
      if (Clock::now() >= deadline) break;
    }
    std::this_thread::sleep_for(milliseconds(50));
  } while (Clock::now() < deadline);
  std::vector<std::string> tried;
  for (const std::string& address : offer.addresses)
    tried.push_back(fmt::format("{}:{} ({})", address, offer.port, last_error[address]));
  throw TimeoutError(fmt::format(
      "rank {} of {} (started by {}) reached none of rank 0's addresses within {} ms "
      "(KOLO_START_TIMEOUT): {}; set KOLO_IFACE on rank 0 to the interface the hosts share",
      rank, config.layout.size, started_by(config), config.rendezvous.timeout.count(),
      fmt::join(tried, "; ")));
}

std::shared_ptr<rendezvous::Store> connect_store_over_mpi(Config& config, std::string* why_not) {
  // MPI_Init in a process no MPI launcher started makes a world of one (and
  // OpenMPI forks a daemon for it): not worth it to learn that.
  const std::optional<ForeignLauncher> here = detect_foreign_launcher();
  if (!here || !here->mpi_launched) {
    *why_not = "this process's environment names no MPI launcher";
    return nullptr;
  }
  std::optional<backends::MpiRuntime> mpi;
  try {
    mpi = backends::load_mpi_runtime(why_not);
  } catch (const IoError& e) {
    *why_not = fmt::format("MPI did not initialise: {}", e.what());
    return nullptr;
  }
  if (!mpi) return nullptr;
  if (mpi->size() != config.layout.size || mpi->rank() != config.layout.rank) {
    // Every rank sees the same mismatch (each is a world of its own), so
    // none waits in the broadcast below.
    *why_not = fmt::format(
        "MPI_COMM_WORLD has rank {} of {} where {} says rank {} of {} (is the MPI plugin built "
        "for another MPI library than the launcher's?)",
        mpi->rank(), mpi->size(), started_by(config), config.layout.rank, config.layout.size);
    return nullptr;
  }
  const std::string not_delivered = fmt::format(
      "rank {} of {}: MPI did not carry rank 0's rendezvous offer within {} ms "
      "(KOLO_START_TIMEOUT): MPI's own network does not connect these ranks (with OpenMPI, "
      "--mca btl_tcp_if_include names the network the hosts share); ending the job",
      config.layout.rank, config.layout.size, config.rendezvous.timeout.count());
  const auto broadcast = [&](std::string& text) {
    mpi->broadcast_from_rank0(text, config.rendezvous.timeout, not_delivered);
  };
  std::string message;
  if (mpi->rank() != 0) {
    broadcast(message);
    return connect_to_offer(config, decode_offer(message), &config.rendezvous.reached_rank0_at);
  }
  OfferedStore offered;
  try {
    offered = offer_store(config, advertised_addresses(net::list_interface_addresses(),
                                                       config.settings.text("KOLO_IFACE")));
  } catch (const Exception& e) {
    offered.offer.error = e.what();
    message = encode_offer(offered.offer);
    broadcast(message);  // the others fail with the reason too
    throw;
  }
  message = encode_offer(offered.offer);
  broadcast(message);
  KOLO_LOG_DEBUG("rank 0 offered its rendezvous store over MPI at port {} on {}",
                 offered.offer.port, fmt::join(offered.offer.addresses, ", "));
  return offered.store;
}

}  // namespace kolo::launch
