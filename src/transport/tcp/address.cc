#include "transport/tcp/address.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "common/error.h"
#include "common/logging.h"
#include "transport/tcp/socket.h"

namespace kolo::transport::tcp {

namespace {

std::string ipv4_text(const in_addr& addr) {
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &addr, text, sizeof(text));
  return text;
}

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
  ifaddrs* head = nullptr;
  if (::getifaddrs(&head) != 0) throw IoError("getifaddrs(): " + errno_text(errno));
  std::vector<InterfaceAddress> out;
  for (ifaddrs* i = head; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr || i->ifa_addr->sa_family != AF_INET) continue;
    InterfaceAddress entry;
    entry.name = i->ifa_name;
    entry.ipv4 = ipv4_text(reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr);
    entry.up = (i->ifa_flags & IFF_UP) != 0;
    entry.loopback = (i->ifa_flags & IFF_LOOPBACK) != 0;
    out.push_back(std::move(entry));
  }
  ::freeifaddrs(head);
  return out;
}

std::string local_address_routing_to(const std::string& host) {
  addrinfo hints{};
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_DGRAM;
  addrinfo* result = nullptr;
  if (::getaddrinfo(host.c_str(), "9", &hints, &result) != 0 || result == nullptr) return "";
  Fd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  bool routed = fd.valid() && ::connect(fd.get(), result->ai_addr, result->ai_addrlen) == 0;
  ::freeaddrinfo(result);
  if (!routed) return "";
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  if (::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len) != 0) return "";
  if (local.sin_addr.s_addr == htonl(INADDR_ANY)) return "";
  return ipv4_text(local.sin_addr);
}

std::string select_listen_address(const TcpOptions& options) {
  if (!options.iface.empty()) {
    auto interfaces = list_ipv4_interfaces();
    for (const auto& i : interfaces)
      if (i.name == options.iface) return i.ipv4;
    throw InvalidArgument("network interface '" + options.iface +
                          "' (KOLO_IFACE) not found or has no IPv4 address; available: " +
                          describe(interfaces));
  }
  if (!options.address.empty()) {
    in_addr parsed{};
    if (::inet_pton(AF_INET, options.address.c_str(), &parsed) != 1)
      throw InvalidArgument("KOLO_ADDRESS '" + options.address + "' is not an IPv4 address");
    return options.address;
  }
  if (!options.route_hint.empty()) {
    std::string routed = local_address_routing_to(options.route_hint);
    if (!routed.empty()) return routed;
    KOLO_LOG_WARNING("no route to '{}'; picking an interface address instead", options.route_hint);
  }
  for (const auto& i : list_ipv4_interfaces())
    if (i.up && !i.loopback) return i.ipv4;
  return "127.0.0.1";
}

}  // namespace kolo::transport::tcp
