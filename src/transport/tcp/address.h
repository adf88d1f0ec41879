// Which local IPv4 address a rank listens on and publishes to its peers.
#pragma once

#include <string>
#include <vector>

#include "common/net_interfaces.h"
#include "transport/tcp/tcp_options.h"

namespace kolo::transport::tcp {

struct InterfaceAddress {
  std::string name;  // "eth0"
  std::string ipv4;  // "10.0.0.2"
  bool up = false;
  bool loopback = false;
};

// Every IPv4 address of every interface (getifaddrs), in the kernel's order.
std::vector<InterfaceAddress> list_ipv4_interfaces();

// In order of preference: options.iface (its IPv4; unknown -> InvalidArgument
// listing the available interfaces), options.address (must be an IPv4
// literal), the local address that routes to options.route_hint, the first
// non-loopback interface that is up, 127.0.0.1.
std::string select_listen_address(const TcpOptions& options);

// Kept here too: the transport and its tests know it by this name.
using net::local_address_routing_to;

}  // namespace kolo::transport::tcp
