#include "common/net_interfaces.h"

#include <arpa/inet.h>
#include <ifaddrs.h>
#include <net/if.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cerrno>
#include <cstring>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/unique_fd.h"

namespace kolo::net {

std::vector<InterfaceAddress> list_interface_addresses() {
  ifaddrs* head = nullptr;
  if (::getifaddrs(&head) != 0) throw IoError(std::string("getifaddrs(): ") + errno_text(errno));
  std::vector<InterfaceAddress> out;
  for (ifaddrs* i = head; i != nullptr; i = i->ifa_next) {
    if (i->ifa_addr == nullptr) continue;
    const int family = i->ifa_addr->sa_family;
    if (family != AF_INET && family != AF_INET6) continue;
    char text[INET6_ADDRSTRLEN] = {};
    const void* raw =
        family == AF_INET
            ? static_cast<const void*>(&reinterpret_cast<const sockaddr_in*>(i->ifa_addr)->sin_addr)
            : static_cast<const void*>(
                  &reinterpret_cast<const sockaddr_in6*>(i->ifa_addr)->sin6_addr);
    ::inet_ntop(family, raw, text, sizeof text);
    out.push_back({i->ifa_name, text, family == AF_INET6, (i->ifa_flags & IFF_UP) != 0,
                   (i->ifa_flags & IFF_LOOPBACK) != 0});
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
  UniqueFd fd(::socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0));
  bool routed = fd.valid() && ::connect(fd.get(), result->ai_addr, result->ai_addrlen) == 0;
  ::freeaddrinfo(result);
  sockaddr_in local{};
  socklen_t len = sizeof(local);
  if (routed) routed = ::getsockname(fd.get(), reinterpret_cast<sockaddr*>(&local), &len) == 0;
  if (!routed || local.sin_addr.s_addr == htonl(INADDR_ANY)) return "";
  char text[INET_ADDRSTRLEN] = {};
  ::inet_ntop(AF_INET, &local.sin_addr, text, sizeof text);
  return text;
}

}  // namespace kolo::net
