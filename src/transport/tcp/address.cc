#include "transport/tcp/address.h"

#include <arpa/inet.h>
#include <netinet/in.h>

#include "common/error.h"
#include "common/logging.h"
#include "common/net_interfaces.h"

namespace kolo::transport::tcp {

namespace {

std::string describe(const std::vector<InterfaceAddress>& interfaces) {
  std::string out;
  for (const auto& i : interfaces) {
    if (!out.empty()) out += ", ";
    out += i.name + " (" + i.ipv4 + (i.up ? "" : ", down") + ")";
  }
  return out.empty() ? "none" : out;
}

}  // namespace

std::vector<InterfaceAddress> list_ipv4_interfaces() {
  std::vector<InterfaceAddress> out;
  for (const auto& i : net::list_interface_addresses())
    if (!i.ipv6) out.push_back({i.name, i.address, i.up, i.loopback});
  return out;
}

std::string select_listen_address(const TcpOptions& options) {
  if (!options.iface.empty()) {
    auto interfaces = list_ipv4_interfaces();
    for (const auto& i : interfaces)
      if (i.name == options.iface) return i.ipv4;
    throw InvalidArgument(
        "network interface '" + options.iface +
        "' (KOLO_IFACE) not found or has no IPv4 address; available: " + describe(interfaces));
  }
  if (!options.address.empty()) {
    in_addr parsed{};
    if (::inet_pton(AF_INET, options.address.c_str(), &parsed) != 1)
      throw InvalidArgument("KOLO_ADDRESS '" + options.address + "' is not an IPv4 address");
    return options.address;
  }
  if (!options.route_hint.empty()) {
    std::string routed = net::local_address_routing_to(options.route_hint);
    if (!routed.empty()) return routed;
    KOLO_LOG_WARNING("no route to '{}'; picking an interface address instead", options.route_hint);
  }
  for (const auto& i : list_ipv4_interfaces())
    if (i.up && !i.loopback) return i.ipv4;
  return "127.0.0.1";
}

}  // namespace kolo::transport::tcp
