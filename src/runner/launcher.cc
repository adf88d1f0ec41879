#include "runner/launcher.h"

#include <fmt/format.h>
#include <unistd.h>

#include <climits>
#include <set>

#include "common/error.h"
#include "common/net_interfaces.h"
#include "rendezvous/store_auth.h"
#include "rendezvous/tcp_store_server.h"
#include "runner/output_mux.h"
#include "runner/rank_env.h"
#include "runner/remote_exec.h"
#include "runner/signal_capture.h"
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

// Where remote ranks reach the store: the named interface, else the local
// address that routes to the first remote host, else the first interface
// that is up and not loopback.
std::string reachable_address(const LaunchOptions& options, const std::string& first_remote) {
  if (!options.network_interface.empty()) return interface_address(options.network_interface);
  std::string routed = net::local_address_routing_to(host_address(first_remote));
  if (!routed.empty()) return routed;
  for (const auto& i : net::list_interface_addresses())
    if (!i.ipv6 && i.up && !i.loopback) return i.address;
  throw InvalidArgument(
      fmt::format("no network address of this host reaches {}; name one with --network-interface",
                  first_remote));
}

std::string ssh_target(const std::string& host) {
  // ssh wants IPv6 addresses bare; the host list writes them in brackets.
  size_t open = host.find('[');
  if (open == std::string::npos || host.back() != ']') return host;
  return host.substr(0, open) + host.substr(open + 1, host.size() - open - 2);
}

}  // namespace

JobResult launch(const LaunchOptions& options, int stdout_fd, int stderr_fd) {
  if (options.command.empty()) throw InvalidArgument("no program to run");
  const std::vector<RankSlot> slots = assign_ranks(options.hosts, options.np);
  const LocalIdentity identity = LocalIdentity::probe();
  const Environment launcher_env = current_environment();
  const std::string path = launcher_env.count("PATH") ? launcher_env.at("PATH") : "/usr/bin:/bin";

  std::set<std::string> remote_hosts;
  std::string first_remote;
  for (const auto& s : slots)
    if (!is_local_host(s.host, identity) && remote_hosts.insert(s.host).second &&
        first_remote.empty())
      first_remote = s.host;

  bool any_local = false;
  for (const auto& s : slots) any_local |= remote_hosts.count(s.host) == 0;
  std::string local_program;
  if (any_local) {
    auto found = find_program(options.command[0], path);
    if (!found) throw InvalidArgument(fmt::format("{}: command not found", options.command[0]));
    local_program = *found;
  }
  std::string ssh_program, helper;
  if (!remote_hosts.empty()) {
    auto found = find_program("ssh", path);
    if (!found) throw InvalidArgument("ssh is needed to reach the remote hosts but is not in PATH");
    ssh_program = *found;
    helper = options.remote_helper.empty() ? self_executable() : options.remote_helper;
  }

  RendezvousEndpoint rendezvous;
  std::string bind_address = "127.0.0.1";
  rendezvous.address = "127.0.0.1";
  if (!remote_hosts.empty()) {
    rendezvous.address = reachable_address(options, first_remote);
    bind_address = "0.0.0.0";
  } else if (!options.network_interface.empty()) {
    interface_address(options.network_interface);  // a typo fails here, not in every rank
  }
  rendezvous.secret = rendezvous::generate_secret();

  // Signals are captured before the store's thread starts, so it inherits the mask.
  SignalCapture signals;
  rendezvous::TcpStoreServerOptions server_options;
  server_options.bind_address = bind_address;
  server_options.secret = rendezvous.secret;
  rendezvous::TcpStoreServer server(server_options);
  rendezvous.port = server.port();

  const std::string cwd = current_directory();
  const Environment remote_base = forwardable_environment(launcher_env);
  const Stream output = options.output.tagged ? Stream::pipe() : Stream::inherit();
  std::vector<RankLaunch> ranks;
  for (const auto& slot : slots) {
    RankLaunch r;
    r.slot = slot;
    r.remote = remote_hosts.count(slot.host) > 0;
    r.spawn.out = output;
    r.spawn.err = output;
    if (!r.remote) {
      r.spawn.argv = options.command;
      r.spawn.argv[0] = local_program;
      r.spawn.env = rank_environment(launcher_env, slot, rendezvous, options);
    } else {
      RemoteRequest request;
      request.cwd = cwd;
      request.argv = options.command;
      request.env = rank_environment(remote_base, slot, rendezvous, options);
      request.grace_ms = static_cast<int>(options.kill_grace.count());
      r.remote_request = encode_remote_request(request);
      r.spawn.argv = ssh_command(ssh_program, options.ssh, ssh_target(slot.host), helper);
      r.spawn.env = launcher_env;
      r.spawn.in = Stream::pipe();
    }
    ranks.push_back(std::move(r));
  }

  if (options.verbose) {
    auto say = [&](const std::string& line) { write_fully(stderr_fd, "kolorun: " + line + "\n"); };
    say(fmt::format("{} ranks; rendezvous store at {}:{} (listening on {})", slots.size(),
                    rendezvous.address, rendezvous.port, bind_address));
    for (const auto& r : ranks)
      say(fmt::format("rank {}: host {} local_rank {}/{} cross_rank {}/{} via {}", r.slot.rank,
                      r.slot.host, r.slot.local_rank, r.slot.local_size, r.slot.cross_rank,
                      r.slot.cross_size,
                      r.remote ? fmt::format("ssh: {}", fmt::join(r.spawn.argv, " "))
                               : std::string("fork/exec")));
  }

  JobOptions job_options;
  job_options.output = options.output;
  job_options.stdout_fd = stdout_fd;
  job_options.stderr_fd = stderr_fd;
  job_options.signal_fd = signals.fd();
  job_options.kill_grace = options.kill_grace;
  job_options.job_timeout = options.job_timeout;
  job_options.verbose = options.verbose;
  Job job(std::move(ranks), job_options);
  return job.run();
}

JobResult launch_local(int np, std::vector<std::string> command,
                       std::chrono::milliseconds job_timeout) {
  LaunchOptions options;
  options.np = np;
  options.hosts = {{"localhost", np}};
  options.command = std::move(command);
  options.output.tagged = false;
  options.job_timeout = job_timeout;
  return launch(options);
}

}  // namespace kolo::runner
