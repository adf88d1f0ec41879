#include "transport/tcp/congestion.h"

#include <fmt/format.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>

#include "common/errno_text.h"
#include "common/error.h"
#include "transport/tcp/socket.h"

namespace kolo::transport::tcp {

namespace {

// The kernel's limit on an algorithm's name, without the terminating zero.
constexpr size_t kMaxNameLength = 15;
// Unpaced algorithms for connections within a host, best first; the kernel
// lets any process use reno.
constexpr const char* kWithinHostChoices[] = {"cubic", "reno"};

std::string read_proc_line(const char* path) {
  std::ifstream in(path);
  std::string line;
  std::getline(in, line);
  return line.empty() ? "unknown" : line;
}

std::string host_offers() {
  return fmt::format("this host offers: {}; without CAP_NET_ADMIN: {}",
                     read_proc_line("/proc/sys/net/ipv4/tcp_available_congestion_control"),
                     read_proc_line("/proc/sys/net/ipv4/tcp_allowed_congestion_control"));
}

bool try_set(int fd, const std::string& name, int* err) {
  if (::setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name.data(),
                   static_cast<socklen_t>(name.size())) == 0)
    return true;
  *err = errno;
  return false;
}

uint32_t address_of(int fd, bool peer) {
  sockaddr_in addr{};
  socklen_t len = sizeof(addr);
  auto* raw = reinterpret_cast<sockaddr*>(&addr);
  const int rc = peer ? ::getpeername(fd, raw, &len) : ::getsockname(fd, raw, &len);
  if (rc != 0 || addr.sin_family != AF_INET) return 0;
  return addr.sin_addr.s_addr;
}

}  // namespace

void validate_congestion_setting(const std::string& setting) {
  const bool well_formed =
      !setting.empty() && setting.size() <= kMaxNameLength &&
      setting.find_first_not_of(
          "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-") == std::string::npos;
  if (!well_formed)
    throw InvalidArgument(
        fmt::format("KOLO_TCP_CONGESTION='{}' is not a setting: use auto, system, or the name of a "
                    "TCP congestion "
                    "control algorithm (letters, digits, '_' and '-', up to {} characters)",
                    setting, kMaxNameLength));
}

CongestionPlan plan_congestion(const std::string& setting) {
  validate_congestion_setting(setting);
  if (setting == kCongestionSystem) return {};
  UniqueFd probe(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0));
  if (!probe.valid()) throw IoError("socket(): " + errno_text(errno));
  if (setting != kCongestionAuto) {
    set_congestion(probe.get(), setting);
    return {setting, setting};
  }
  CongestionPlan plan;
  plan.across_hosts = congestion_of(probe.get());
  for (const char* choice : kWithinHostChoices) {
    int err = 0;
    if (try_set(probe.get(), choice, &err)) {
      plan.within_host = choice;
      break;
    }
  }
  return plan;
}

std::string congestion_of(int fd) {
  char name[kMaxNameLength + 1] = {};
  socklen_t len = sizeof(name);
  if (::getsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, &len) != 0) return "";
  return std::string(name, strnlen(name, std::min<size_t>(len, sizeof(name))));
}

void set_congestion(int fd, const std::string& name) {
  int err = 0;
  if (!try_set(fd, name, &err))
    throw InvalidArgument(fmt::format("KOLO_TCP_CONGESTION={}: the kernel refused it ({}); {}",
                                      name, errno_text(err), host_offers()));
}

bool same_host_connection(int fd) {
  const uint32_t local = address_of(fd, false);
  return local != 0 && local == address_of(fd, true);
}

void settle_congestion(int fd, const CongestionPlan& plan) {
  const std::string& wanted = same_host_connection(fd) ? plan.within_host : plan.across_hosts;
  if (!wanted.empty() && congestion_of(fd) != wanted) set_congestion(fd, wanted);
}

}  // namespace kolo::transport::tcp
