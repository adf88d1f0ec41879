#include "core/launch/store_offer.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <charconv>
#include <sstream>
#include <vector>

#include "common/error.h"

namespace kolo::launch {
namespace {

constexpr std::string_view kMagic = "kolo-store-offer-1";

// The first `count` lines, and what follows them (the error, which may
// span lines) as one more.
std::vector<std::string> split_lines(std::string_view text, size_t count) {
  std::vector<std::string> parts;
  while (parts.size() < count) {
    const size_t end = text.find('\n');
    if (end == std::string_view::npos) break;
    parts.emplace_back(text.substr(0, end));
    text.remove_prefix(end + 1);
  }
  parts.emplace_back(text);
  return parts;
}

}  // namespace

std::string encode_offer(const StoreOffer& offer) {
  return fmt::format("{}\n{}\n{}\n{}\n{}", kMagic, offer.port, offer.secret,
                     fmt::join(offer.addresses, " "), offer.error);
}

StoreOffer decode_offer(std::string_view text) {
  const std::vector<std::string> lines = split_lines(text, 4);
  if (lines.size() != 5 || lines[0] != kMagic)
    throw InternalError(fmt::format("rank 0's store offer is malformed: '{}'", text));
  StoreOffer offer;
  const std::string& port = lines[1];
  unsigned value = 0;
  const auto [end, ec] = std::from_chars(port.data(), port.data() + port.size(), value);
  if (ec != std::errc() || end != port.data() + port.size() || value > 65535)
    throw InternalError(fmt::format("rank 0's store offer has port '{}'", port));
  offer.port = static_cast<uint16_t>(value);
  offer.secret = lines[2];
  std::istringstream addresses(lines[3]);
  for (std::string address; addresses >> address;) offer.addresses.push_back(address);
  offer.error = lines[4];
  if (offer.error.empty() && (offer.addresses.empty() || offer.port == 0))
    throw InternalError(fmt::format("rank 0's store offer names no address: '{}'", text));
  return offer;
}

std::vector<std::string> advertised_addresses(const std::vector<net::InterfaceAddress>& interfaces,
                                              const std::string& iface) {
  std::vector<std::string> chosen;
  if (!iface.empty()) {
    std::vector<std::string> known;
    for (const auto& i : interfaces) {
      if (i.ipv6) continue;
      known.push_back(fmt::format("{} ({})", i.name, i.address));
      if (i.name == iface) chosen.push_back(i.address);
    }
    if (chosen.empty())
      throw InvalidArgument(fmt::format(
          "network interface '{}' (KOLO_IFACE) not found on rank 0's host or has no IPv4 "
          "address; available: {}",
          iface, known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
    return chosen;
  }
  std::vector<std::string> loopback;
  for (const auto& i : interfaces) {
    if (i.ipv6 || !i.up) continue;
    (i.loopback ? loopback : chosen).push_back(i.address);
  }
  chosen.insert(chosen.end(), loopback.begin(), loopback.end());
  if (chosen.empty()) chosen.push_back("127.0.0.1");
  return chosen;
}

}  // namespace kolo::launch
