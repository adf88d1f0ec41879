// The hosts of a job and how many ranks each may run, from `-H a:2,b:2` or
// a hostfile, as horovodrun accepts them; and which of them are this
// machine (those ranks are forked, not reached over ssh).
#pragma once

#include <set>
#include <string>
#include <vector>

namespace kolo::runner {

struct HostSlots {
  std::string host;  // as the user wrote it: a name, an IPv4, [IPv6], or user@host
  int slots = 1;
  bool operator==(const HostSlots&) const = default;
};

// "host1:4,host2:4" (a host without ":N" has one slot). Throws
// InvalidArgument naming the offending entry.
std::vector<HostSlots> parse_host_list(const std::string& text);

// A hostfile's text: one host a line, "host slots=N", "host:N" or "host";
// '#' starts a comment; blank lines are skipped. `origin` (the file name)
// prefixes error messages with the line number.
std::vector<HostSlots> parse_hostfile_text(const std::string& text, const std::string& origin);

// Reads and parses a hostfile; a missing or unreadable file is an
// InvalidArgument naming it.
std::vector<HostSlots> read_hostfile(const std::string& path);

// The names and addresses by which this machine knows itself.
struct LocalIdentity {
  std::set<std::string> names;      // hostname, its short form, "localhost"
  std::set<std::string> addresses;  // every interface address, IPv4 and IPv6
  static LocalIdentity probe();
};

// True for hosts that are this machine: loopback names and addresses, its
// own host names and interface addresses. A user@ prefix counts as remote
// (another account means ssh).
bool is_local_host(const std::string& host, const LocalIdentity& identity);

// The host part without user@ and IPv6 brackets, for name lookups.
std::string host_address(const std::string& host);

}  // namespace kolo::runner
