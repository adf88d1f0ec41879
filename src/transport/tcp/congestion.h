// Which TCP congestion control the data connections use
// (TcpOptions::congestion, KOLO_TCP_CONGESTION).
//
// Why Kolo chooses at all: a host whose default is a pacing algorithm (BBR)
// paces loopback connections too, where there is no link or queue to pace
// for. On a 2-core VM with BBR as the default, pacing halved the bandwidth of
// a 4-32 MB allreduce between two ranks of one host (docs/benchmarks.md,
// "Congestion control on loopback"). So in "auto" mode, connections between
// ranks of the same host use cubic (reno where cubic is not permitted), and
// connections between hosts keep the host's default, which its operator
// chose for the network.
//
// When it must be chosen: before the handshake. A pacing algorithm that is
// in place when the connection comes up turns pacing on for the socket's
// whole life, and switching away afterwards leaves it on. Accepted
// connections inherit the listener's algorithm, so the listener takes the
// within-host choice, and a connection accepted from another host is
// switched to the across-hosts choice once it is up (switching to an
// algorithm on a live connection is supported: it initializes itself).
#pragma once

#include <string>

namespace kolo::transport::tcp {

inline constexpr const char* kCongestionAuto = "auto";      // the rule above
inline constexpr const char* kCongestionSystem = "system";  // never touch a socket's algorithm

// What one rank's connections get; an empty name leaves the socket alone.
struct CongestionPlan {
  std::string within_host;   // connections whose two ends share an address
  std::string across_hosts;  // every other connection
};

// Throws InvalidArgument unless `setting` is auto, system, or could be a
// kernel algorithm's name (letters, digits, '_' and '-', up to 15).
void validate_congestion_setting(const std::string& setting);

// Works the plan out for this host on a probe socket: reads the host's
// default, and tries the names the setting asks for. An explicit name the
// kernel refuses throws InvalidArgument with what the host offers.
CongestionPlan plan_congestion(const std::string& setting);

// The socket's algorithm ("" when it cannot be read).
std::string congestion_of(int fd);

// Sets `name` on `fd`; throws InvalidArgument naming the setting, the
// kernel's reason and what the host offers.
void set_congestion(int fd, const std::string& name);

// Both ends of the connection have the same IPv4 address: the two ranks
// share a host (and a network namespace), so the bytes never leave it.
bool same_host_connection(int fd);

// Gives an established connection the algorithm the plan wants for it.
void settle_congestion(int fd, const CongestionPlan& plan);

}  // namespace kolo::transport::tcp
