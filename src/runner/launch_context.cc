#include "runner/launch_context.h"

#include <fmt/format.h>
#include <unistd.h>

#include <climits>

#include "common/error.h"
#include "common/net_interfaces.h"
#include "rendezvous/store_auth.h"
#include "runner/rank_supervisor.h"
#include "runner/remote_exec.h"
#include "runner/ssh_command.h"

namespace kolo::runner {
namespace {

std::string self_executable() {
  char path[PATH_MAX] = {};
  ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  if (n <= 0) throw IoError("cannot find kolorun's own path in /proc/self/exe");
  return std::string(path, static_cast<size_t>(n));
}

std::string current_directory() {
  char path[PATH_MAX] = {};
  if (::getcwd(path, sizeof path) == nullptr) throw IoError("cannot read the current directory");
  return path;
}

std::string interface_address(const std::string& name) {
  std::string available;
  for (const auto& i : net::list_interface_addresses()) {
    if (i.ipv6) continue;
    if (i.name == name) return i.address;
    available += (available.empty() ? "" : ", ") + i.name;
  }
  throw InvalidArgument(
      fmt::format("--network-interface {}: no such interface with an IPv4 address (have: {})", name,
                  available));
}

// The address of this machine that `toward` (a remote host; empty: none
// known) reaches it on: the named interface, else the local address the
// kernel would send from to reach it (a connected UDP socket's own address),
// else the first interface that is up and not loopback. The first interface
// alone is not enough: on a machine with several networks it is often one
// the hosts cannot reach.
std::string address_toward(const LaunchOptions& options, const std::string& toward) {
  if (const std::string iface = options.setting("KOLO_IFACE"); !iface.empty())
    return interface_address(iface);
  if (!toward.empty()) {
    std::string routed = net::local_address_routing_to(host_address(toward));
    if (!routed.empty()) return routed;
  }
  for (const auto& i : net::list_interface_addresses())
    if (!i.ipv6 && i.up && !i.loopback) return i.address;
  if (toward.empty()) return "127.0.0.1";  // no network at all: local hosts still work
  throw InvalidArgument(fmt::format(
      "no network address of this host reaches {}; name one with --network-interface", toward));
}

std::string ssh_target(const std::string& host) {
  // ssh wants IPv6 addresses bare; the host list writes them in brackets.
  size_t open = host.find('[');
  if (open == std::string::npos || host.back() != ']') return host;
  return host.substr(0, open) + host.substr(open + 1, host.size() - open - 2);
}

std::string program_not_found(const std::string& program) {
  if (program.find('/') == std::string::npos) return fmt::format("{}: command not found", program);
  return fmt::format("{}: no executable file there", program);
}

}  // namespace

LaunchContext::LaunchContext(const LaunchOptions& options,
                             const std::vector<std::string>& known_hosts, bool any_remote_later)
    : options_(options),
      identity_(LocalIdentity::probe()),
      launcher_env_(current_environment()),
      remote_base_(forwardable_environment(launcher_env_)),
      cwd_(current_directory()) {
  if (options.command.empty()) throw InvalidArgument("no program to run");
  const std::string path = launcher_env_.count("PATH") ? launcher_env_.at("PATH") : "/usr/bin:/bin";
  std::string first_remote;
  bool any_local = false;
  for (const auto& h : known_hosts) {
    if (is_local(h)) {
      any_local = true;
    } else if (first_remote.empty()) {
      first_remote = h;
    }
  }
  local_program_ = find_program(options.command[0], path);
  if (any_local && !local_program_) throw InvalidArgument(program_not_found(options.command[0]));
  ssh_program_ = find_program("ssh", path);
  if (!first_remote.empty() && !ssh_program_)
    throw InvalidArgument("ssh is needed to reach the remote hosts but is not in PATH");
  self_ = self_executable();
  helper_ = options.remote_helper.empty() ? self_ : options.remote_helper;

  first_remote_ = first_remote;
  bind_address_ = "127.0.0.1";
  rendezvous_.address = "127.0.0.1";
  if (!first_remote.empty() || any_remote_later) {
    rendezvous_.address = address_toward(options, first_remote);
    bind_address_ = "0.0.0.0";
  } else if (const std::string iface = options.setting("KOLO_IFACE"); !iface.empty()) {
    interface_address(iface);  // a typo fails here, not in every rank
  }
  rendezvous_.secret = rendezvous::generate_secret();
  rendezvous::TcpStoreServerOptions server_options;
  server_options.bind_address = bind_address_;
  server_options.secret = rendezvous_.secret;
  server_ = std::make_unique<rendezvous::TcpStoreServer>(server_options);
  rendezvous_.port = server_->port();
}

LaunchContext::~LaunchContext() = default;

void LaunchContext::saw_host(const std::string& host) {
  if (first_remote_.empty() && !is_local(host)) first_remote_ = host;
}

std::string LaunchContext::store_address_for(const std::string& host) const {
  if (bind_address_ == "127.0.0.1") return rendezvous_.address;  // every rank is on this machine
  // A rank on this machine derives the address it listens on from this one
  // (the route toward it), so it gets the address remote ranks reach it by.
  return address_toward(options_, is_local(host) ? first_remote_ : host);
}

bool LaunchContext::is_local(const std::string& host) const {
  return is_local_host(host, identity_);
}

RankLaunch LaunchContext::make(const RankSlot& slot, int tag, const Environment& extra) const {
  RankLaunch r;
  r.slot = slot;
  r.tag = tag;
  r.remote = !is_local(slot.host);
  RendezvousEndpoint endpoint = rendezvous_;
  endpoint.address = store_address_for(slot.host);
  const Stream output = options_.output.tagged ? Stream::pipe() : Stream::inherit();
  r.spawn.out = output;
  r.spawn.err = output;
  if (!r.remote) {
    if (!local_program_) throw InvalidArgument(program_not_found(options_.command[0]));
    r.spawn.argv = options_.command;
    r.spawn.argv[0] = *local_program_;
    // Under its supervisor, this same executable, which ends whatever the
    // rank started when the rank or kolorun ends.
    if (options_.supervise_ranks) {
      r.spawn.argv.insert(r.spawn.argv.begin(), {self_, kRankSupervisorFlag});
      r.spawn.in = Stream::pipe();  // closed by the supervisor once the program runs
      r.supervised = true;
    }
    r.spawn.env = rank_environment(launcher_env_, slot, endpoint, options_);
    for (const auto& [k, v] : extra) r.spawn.env[k] = v;
  } else {
    if (!ssh_program_)
      throw InvalidArgument(
          fmt::format("ssh is needed to reach host {} but is not in PATH", slot.host));
    RemoteRequest request;
    request.cwd = cwd_;
    request.argv = options_.command;
    request.env = rank_environment(remote_base_, slot, endpoint, options_);
    for (const auto& [k, v] : extra) request.env[k] = v;
    request.grace_ms = static_cast<int>(options_.kill_grace.count());
    r.remote_request = encode_remote_request(request);
    r.spawn.argv = ssh_command(*ssh_program_, options_.ssh, ssh_target(slot.host), helper_);
    r.spawn.env = launcher_env_;
    r.spawn.in = Stream::pipe();
  }
  return r;
}

}  // namespace kolo::runner
