// What every process of one launch shares: the rendezvous store (hosted
// here, with a fresh secret, on an address the hosts can reach) and how to
// start a process on a host (fork/exec on this machine, ssh elsewhere).
// The static launcher builds all ranks from it at once; the elastic driver
// builds workers from it as hosts appear.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "rendezvous/tcp_store_server.h"
#include "runner/job.h"
#include "runner/launch_options.h"
#include "runner/rank_env.h"

namespace kolo::runner {

class LaunchContext {
 public:
  // `known_hosts`: the hosts known before the start (a remote one decides
  // which local address the store is published on). `any_remote_later`:
  // remote hosts may appear later (elastic discovery), so the store listens
  // on every interface. Throws InvalidArgument for input that cannot be
  // launched (unknown command, no ssh, unknown interface).
  LaunchContext(const LaunchOptions& options, const std::vector<std::string>& known_hosts,
                bool any_remote_later);
  ~LaunchContext();

  bool is_local(const std::string& host) const;
  // A host the job may use from now on (elastic discovery): the first
  // remote one decides the address ranks on this machine are given.
  void saw_host(const std::string& host);
  // The store's address as ranks on `host` are told it, by one rule for
  // -H and discovered hosts: loopback when every rank is on this machine;
  // else --network-interface's address, or the local address that routes to
  // `host` (for this machine's own ranks: to the first remote host known).
  // Throws InvalidArgument when no address reaches the host.
  std::string store_address_for(const std::string& host) const;
  // The process of one rank; `extra` is added to its environment last.
  // Throws InvalidArgument when the host cannot be reached the way it needs
  // (a local command not found, no ssh for a remote host).
  RankLaunch make(const RankSlot& slot, int tag, const Environment& extra = {}) const;
  // The store as the launcher itself reaches it; the address is the one
  // for this machine's ranks at the start (store_address_for gives each host's).
  const RendezvousEndpoint& rendezvous() const { return rendezvous_; }
  const std::string& bind_address() const { return bind_address_; }

 private:
  const LaunchOptions& options_;
  LocalIdentity identity_;
  Environment launcher_env_;
  Environment remote_base_;
  std::string cwd_;
  std::optional<std::string> local_program_;
  std::optional<std::string> ssh_program_;
  std::string self_;  // this executable
  std::string helper_;
  RendezvousEndpoint rendezvous_;
  std::string bind_address_;
  std::string first_remote_;  // the first remote host known, or empty
  std::unique_ptr<rendezvous::TcpStoreServer> server_;
};

}  // namespace kolo::runner
