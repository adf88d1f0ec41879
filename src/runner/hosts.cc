#include "runner/hosts.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <set>
#include <sstream>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/net_interfaces.h"
#include "common/untrusted_text.h"

namespace kolo::runner {
namespace {

constexpr int kMaxSlots = 4096;

std::string trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// Letters, digits and the punctuation of names, addresses and user@host:
// anything else (spaces, quotes, shell characters) is a typo or an attack on
// the ssh command line.
bool valid_host(const std::string& host) {
  if (host.empty() || host.size() > 255 || host.front() == '-') return false;
  for (char c : host) {
    bool ok = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
              c == '@' || c == '[' || c == ']' || c == ':' || c == '%';
    if (!ok) return false;
  }
  return true;
}

int parse_slots(const std::string& text, const std::string& context) {
  int value = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size() || text.empty())
    throw InvalidArgument(
        fmt::format("{}: slots '{}' is not a number", context, untrusted_text(text)));
  if (value < 1 || value > kMaxSlots)
    throw InvalidArgument(
        fmt::format("{}: slots must be between 1 and {}, not {}", context, kMaxSlots, value));
  return value;
}

// "host", "host:N", "[v6]", "[v6]:N".
HostSlots parse_host_entry(const std::string& entry, const std::string& context) {
  HostSlots h;
  std::string host = entry;
  if (!entry.empty() && entry.find('[') != std::string::npos) {
    size_t close = entry.find(']');
    if (close == std::string::npos)
      throw InvalidArgument(
          fmt::format("{}: unclosed '[' in '{}'", context, untrusted_text(entry)));
    host = entry.substr(0, close + 1);
    std::string rest = entry.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':')
        throw InvalidArgument(
            fmt::format("{}: '{}' is not host:slots", context, untrusted_text(entry)));
      h.slots = parse_slots(rest.substr(1), context);
    }
  } else if (size_t colon = entry.find(':'); colon != std::string::npos) {
    if (entry.find(':', colon + 1) != std::string::npos)
      throw InvalidArgument(
          fmt::format("{}: '{}' is not host:slots (write IPv6 addresses as [addr]:slots)", context,
                      untrusted_text(entry)));
    host = entry.substr(0, colon);
    h.slots = parse_slots(entry.substr(colon + 1), context);
  }
  if (!valid_host(host))
    throw InvalidArgument(
        fmt::format("{}: '{}' is not a host name", context, untrusted_text(host)));
  h.host = host;
  return h;
}

void check_duplicates(const std::vector<HostSlots>& hosts, const std::string& origin) {
  std::set<std::string> seen;
  for (const auto& h : hosts)
    if (!seen.insert(h.host).second)
      throw InvalidArgument(fmt::format(
          "{}: host '{}' is listed twice (give it more slots instead)", origin, h.host));
}

}  // namespace

std::vector<HostSlots> parse_host_list(const std::string& text) {
  std::vector<HostSlots> hosts;
  std::stringstream in(text);
  std::string entry;
  while (std::getline(in, entry, ',')) {
    entry = trim(entry);
    if (entry.empty())
      throw InvalidArgument(fmt::format("-H '{}': empty host entry", untrusted_text(text)));
    hosts.push_back(parse_host_entry(entry, "-H"));
  }
  if (hosts.empty()) throw InvalidArgument("-H: no hosts given");
  check_duplicates(hosts, "-H");
  return hosts;
}

std::vector<HostSlots> parse_hostfile_text(const std::string& text, const std::string& origin) {
  std::vector<HostSlots> hosts;
  std::stringstream in(text);
  std::string line;
  int number = 0;
  while (std::getline(in, line)) {
    ++number;
    if (size_t hash = line.find('#'); hash != std::string::npos) line.resize(hash);
    line = trim(line);
    if (line.empty()) continue;
    const std::string context = fmt::format("{}:{}", origin, number);
    std::stringstream words(line);
    std::string first, second, extra;
    words >> first >> second >> extra;
    if (!extra.empty())
      throw InvalidArgument(
          fmt::format("{}: expected 'host slots=N', got '{}'", context, untrusted_text(line)));
    HostSlots h = parse_host_entry(first, context);
    if (!second.empty()) {
      if (first.find(':') != std::string::npos && first.front() != '[')
        throw InvalidArgument(
            fmt::format("{}: give slots once, as host:N or host slots=N", context));
      if (second.rfind("slots=", 0) != 0)
        throw InvalidArgument(fmt::format("{}: expected 'slots=N' after the host, got '{}'",
                                          context, untrusted_text(second)));
      h.slots = parse_slots(second.substr(6), context);
    }
    hosts.push_back(h);
  }
  if (hosts.empty()) throw InvalidArgument(fmt::format("{}: no hosts in the hostfile", origin));
  check_duplicates(hosts, origin);
  return hosts;
}

std::vector<HostSlots> read_hostfile(const std::string& path) {
  std::ifstream in(path);
  if (!in)
    throw InvalidArgument(fmt::format("cannot read hostfile '{}': {}", path, errno_text(errno)));
  std::stringstream text;
  text << in.rdbuf();
  return parse_hostfile_text(text.str(), path);
}

LocalIdentity LocalIdentity::probe() {
  LocalIdentity id;
  id.names = {"localhost", "localhost.localdomain", "ip6-localhost"};
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) == 0 && name[0] != '\0') {
    std::string full(name);
    id.names.insert(full);
    id.names.insert(full.substr(0, full.find('.')));
  }
  try {
    for (const auto& i : net::list_interface_addresses()) id.addresses.insert(i.address);
  } catch (const Error&) {
    // Without the interface list, names and loopback still identify this host.
  }
  return id;
}

std::string host_address(const std::string& host) {
  std::string h = host.substr(host.find('@') == std::string::npos ? 0 : host.find('@') + 1);
  if (h.size() >= 2 && h.front() == '[' && h.back() == ']') h = h.substr(1, h.size() - 2);
  return h;
}

bool is_local_host(const std::string& host, const LocalIdentity& identity) {
  if (host.find('@') != std::string::npos) return false;
  std::string h = host_address(host);
  if (identity.names.count(h) || identity.addresses.count(h)) return true;
  in_addr v4{};
  if (::inet_pton(AF_INET, h.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;  // 127/8
  in6_addr v6{};
  if (::inet_pton(AF_INET6, h.c_str(), &v6) == 1) return IN6_IS_ADDR_LOOPBACK(&v6);
  return false;
}

}  // namespace kolo::runner
