// What rank 0 tells the other ranks of an MPI-launched job about the store
// it hosts, sent over MPI (store_over_mpi.h): the addresses where it may be
// reached, its port and, when the user gave none, the job's secret. A rank
// 0 that could not start the store sends the reason instead, so nobody
// waits for a store that will never come.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/net_interfaces.h"

namespace kolo::launch {

struct StoreOffer {
  std::vector<std::string> addresses;  // IPv4, most promising first
  uint16_t port = 0;
  std::string secret;  // empty: every rank has the user's KOLO_SECRET
  std::string error;   // non-empty: rank 0 has no store, and this says why
};

// One line per field (the error last, as many lines as it has); throws InternalError on text that
// is not an offer (both ends are the same build, so that is a bug, not bad input).
std::string encode_offer(const StoreOffer& offer);
StoreOffer decode_offer(std::string_view text);

// The IPv4 addresses rank 0 advertises, from this machine's `interfaces`:
// with `iface` (KOLO_IFACE) the addresses of that interface only (none:
// InvalidArgument listing the interfaces); otherwise every non-loopback
// interface that is up, in the kernel's order, then the loopback ones (the
// ranks on rank 0's own host may use them). Never empty.
std::vector<std::string> advertised_addresses(const std::vector<net::InterfaceAddress>& interfaces,
                                              const std::string& iface);

}  // namespace kolo::launch
