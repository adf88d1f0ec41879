// The rendezvous store that rank 0 of a foreign launcher's job hosts in its
// own process (foreign_store.h, store_over_mpi.h), and a client of such a
// store. Rank 0 talks to its own server through a client on loopback like
// everyone else, so every rank sees the same Store.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "core/config.h"
#include "core/launch/rendezvous_file.h"
#include "rendezvous/store.h"

namespace kolo::launch {

// A store hosted here: the server lives as long as this object. The file
// that advertised it, if any, is removed first, so no rank reads an address
// about to die.
class HostedStore : public rendezvous::Store {
 public:
  virtual uint16_t port() const = 0;
};

// Starts the server on bind_address:port (0: an ephemeral port) with
// `secret`, publishes it in `file` when given, and connects to it. Throws
// IoError naming the address when the server cannot start.
std::shared_ptr<HostedStore> host_store(const std::string& bind_address, uint16_t port,
                                        const std::string& secret,
                                        std::optional<RendezvousFile> file, const Config& config);

// A client of the store at `address`, connecting (with retries) for at most
// `timeout`. Throws what TcpStoreClient throws (AuthError, IoError,
// TimeoutError).
std::unique_ptr<rendezvous::Store> client_of(const StoreAddress& address,
                                             std::chrono::milliseconds timeout);

}  // namespace kolo::launch
