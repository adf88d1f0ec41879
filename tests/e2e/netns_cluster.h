// A small cluster for end-to-end tests: a "launcher" network namespace with
// a bridge, and N "host" namespaces joined to it by veth pairs, each running
// OpenSSH's sshd on port 2222 with host and user keys made for the run.
// Addresses come from 198.18.0.0/15 (the benchmarking range, never routed),
// inside namespaces that only this run uses, so concurrent runs cannot
// collide. Everything is removed by the destructor (and namespaces left by
// a run that was killed are removed by the next one).
//
// Needs root, `ip` with netns support, /usr/sbin/sshd and ssh-keygen;
// available() says why not when something is missing.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "support/child_process.h"

namespace kolo::testing {

class NetnsCluster {
 public:
  // An empty string when this machine can run the cluster; else the reason.
  static std::string unavailable_reason();

  explicit NetnsCluster(int hosts);  // throws std::runtime_error naming the step that failed
  ~NetnsCluster();
  NetnsCluster(const NetnsCluster&) = delete;
  NetnsCluster& operator=(const NetnsCluster&) = delete;

  const std::string& launcher_namespace() const { return launcher_ns_; }
  const std::vector<std::string>& host_namespaces() const { return host_ns_; }
  const std::vector<std::string>& host_addresses() const { return addresses_; }
  const std::string& dir() const { return dir_; }  // temp dir with keys, configs, logs
  std::string user_key() const { return dir_ + "/user_key"; }
  std::string known_hosts() const { return dir_ + "/known_hosts"; }
  std::vector<int> sshd_pids() const;

  // PIDs of every process in a namespace (ip netns pids).
  std::vector<int> pids_in(const std::string& ns) const;
  // Runs a shell command, returns its exit code; output appended to *output.
  int sh(const std::string& command, std::string* output = nullptr) const;

 private:
  void must(const std::string& command) const;
  void start_sshd(size_t host);
  void wait_for_ssh(size_t host) const;

  std::string prefix_, dir_, launcher_ns_;
  std::vector<std::string> host_ns_, addresses_;
  std::vector<std::unique_ptr<ChildProcess>> sshd_;
};

}  // namespace kolo::testing
