// Everything a job launch needs, as kolorun's command line (cli.h) or a
// tool such as kolo-bench -np fills it in. Plain values; launcher.h acts on
// them.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "runner/hosts.h"
#include "runner/process.h"

namespace kolo::runner {

struct SshOptions {
  std::optional<int> port;                       // -p
  std::string identity_file;                     // -i
  std::string host_key_checking = "accept-new";  // yes | accept-new | no
  std::string known_hosts_file;                  // empty: ssh's default
  std::vector<std::string> options;              // extra "-o" options, passed as given
  std::chrono::seconds connect_timeout{30};
};

struct OutputOptions {
  // Tagged: every line of every rank as "[rank]<stdout>:line" through the
  // launcher. Inherit: ranks write to the launcher's stdout and stderr
  // directly (kolo-bench -np, where only rank 0 prints).
  bool tagged = true;
  bool timestamps = false;  // --prefix-output-with-timestamp
  std::string directory;    // --output-filename: DIR/rank.N/{stdout,stderr}
};

// Elastic mode (kolorun --min-np / --max-np / --host-discovery-script):
// workers may die or be added and the job goes on in rounds. See
// runner/elastic/elastic_driver.h.
struct ElasticOptions {
  bool enabled = false;
  int min_np = 0;                     // 0 until resolved: then -np
  std::optional<int> max_np;          // none: every available slot
  std::string discovery_script;       // run with /bin/sh -c; empty: the fixed -H/--hostfile hosts
  int slots_per_host = 1;             // for discovered hosts printed without ":slots"
  std::chrono::seconds timeout{600};  // --elastic-timeout
  std::optional<int> reset_limit;     // --reset-limit
  std::optional<std::pair<double, double>> blacklist_cooldown;  // seconds; none: for good
  std::chrono::milliseconds discovery_interval{1000};
};

// kolorun --mpi (or --mpi-args): the system's mpirun starts the ranks
// (runner/mpi_launch.h); kolorun still hosts the rendezvous store.
struct MpiOptions {
  bool enabled = false;
  std::string mpirun;                           // its path, found in PATH
  std::vector<std::string> extra_args;          // --mpi-args, split into words
  std::vector<std::string> binding_args;        // --binding-args; empty: no binding, map by slot
  std::vector<std::string> network_interfaces;  // every --network-interface(s) name
};

struct LaunchOptions {
  int np = 0;
  std::vector<HostSlots> hosts;      // empty: localhost with np slots
  std::vector<std::string> command;  // the program and its arguments
  Environment extra_env;             // -x, already resolved to values
  // KOLO_ variables from the engine-setting flags and --config-file
  // (runner/setting_flags.h), checked; flags win over the file.
  Environment settings;
  ElasticOptions elastic;
  MpiOptions mpi;
  SshOptions ssh;
  OutputOptions output;
  bool verbose = false;
  // When a rank fails or a signal arrives, ranks get this long after
  // SIGTERM (or the forwarded signal) before SIGKILL.
  std::chrono::milliseconds kill_grace{std::chrono::seconds(5)};
  // Whole-job limit; 0 = none (kolo-bench -t). At the limit ranks are stopped.
  std::chrono::milliseconds job_timeout{0};
  // Program that runs ranks on remote hosts (kolorun itself, which must be
  // at this path there too); empty: this executable.
  std::string remote_helper;
  // Local ranks run under a supervisor (rank_supervisor.h), which is this
  // executable: only kolorun, whose main() runs it, sets this.
  bool supervise_ranks = false;

  // A setting the flags or the file give ("" when they do not).
  std::string setting(const std::string& name) const {
    const auto it = settings.find(name);
    return it == settings.end() ? std::string() : it->second;
  }
};

}  // namespace kolo::runner
