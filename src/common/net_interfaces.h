// This machine's interface addresses and routing, shared by the transport
// (which address to listen on) and the launcher (which hosts are this
// machine, where the rendezvous server can be reached).
#pragma once

#include <string>
#include <vector>

namespace kolo::net {

struct InterfaceAddress {
  std::string name;     // "eth0"
  std::string address;  // "10.0.0.2" or "fe80::1"
  bool ipv6 = false;
  bool up = false;
  bool loopback = false;
};

// Every IPv4 and IPv6 address of every interface (getifaddrs), in the
// kernel's order. Throws IoError if the kernel will not say.
std::vector<InterfaceAddress> list_interface_addresses();

// The local IPv4 source address the kernel would use to reach `host`, found
// by connecting a UDP socket (no packet is sent). Empty if unresolvable.
std::string local_address_routing_to(const std::string& host);

}  // namespace kolo::net
