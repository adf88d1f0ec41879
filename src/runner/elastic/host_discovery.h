// Host discovery for elastic jobs (kolorun --host-discovery-script, as in
// horovodrun): a user's script prints the hosts usable right now, one a
// line; kolorun runs it periodically and grows or shrinks the job to match.
// This file runs the script and parses what it prints; host_registry.h
// turns successive host lists into changes and keeps the blacklist.
#pragma once

#include <chrono>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "rendezvous/socket_util.h"
#include "runner/hosts.h"
#include "runner/process.h"

namespace kolo::runner::elastic {

// Parses a discovery script's stdout: one host a line, "host" or
// "host:slots"; IPv6 addresses as "[addr]" or "[addr]:slots". Surrounding
// spaces, tabs and '\r' are trimmed; blank lines and lines whose first
// non-blank character is '#' are skipped. Hosts without ":slots" get
// `default_slots`. Throws InvalidArgument as "line N 'text': problem" for a
// slot count that is not a positive integer (or above 4096), an empty host
// name, whitespace or shell characters inside a host name (the name goes on
// an ssh command line), and a host listed twice. No hosts at all is valid: an empty list.
// A `default_slots` below 1 is the caller's bug: InvalidArgument.
std::vector<HostSlots> parse_discovery_output(std::string_view text, int default_slots);

struct DiscoveryResult {
  bool ok = false;
  std::vector<HostSlots> hosts;  // when ok; may be empty (no hosts right now is a valid answer)
  // When !ok: one line for the user, without the script's name (the caller
  // adds it), e.g. "exited with code 3: <last non-empty stderr line>",
  // "was killed by signal 9 (SIGKILL)", "did not finish within 10 s",
  // "line 2 'a:x': slots must be a positive integer".
  std::string error;
};

// Runs `script` with /bin/sh -c (so it may carry arguments), in this
// process's environment, stdin from /dev/null. Stdout is captured (more than
// 1 MiB is an error) and parsed with parse_discovery_output; stderr is
// captured (its last 64 KiB) for the error message. A script still running at
// `timeout` is killed with everything it started (its process group). The
// script's failures, and a failure to start it at all, come back as !ok;
// only a `default_slots` below 1 throws (InvalidArgument).
DiscoveryResult run_discovery_script(const std::string& script, int default_slots,
                                     std::chrono::milliseconds timeout);

// Runs the discovery script on its own thread: once at construction, then
// again `interval` after each run ends. The driver's event loop collects
// results with take(), which never blocks. Scripts run in the environment
// this process had at construction (read once: the thread never reads
// environ, which the driver's thread might be changing).
//
// Thread model: one background thread owned by this object; take() and
// wait_first() may be called from any thread. The destructor interrupts the
// wait between runs and kills a script in progress, so it returns promptly
// (well under a second) even while the script sleeps.
class HostDiscovery {
 public:
  // Throws InvalidArgument for default_slots < 1, a non-positive timeout or a
  // negative interval.
  HostDiscovery(std::string script, int default_slots, std::chrono::milliseconds interval,
                std::chrono::milliseconds timeout);
  ~HostDiscovery();
  HostDiscovery(const HostDiscovery&) = delete;
  HostDiscovery& operator=(const HostDiscovery&) = delete;

  // The newest result finished since the previous take() (or wait_first()),
  // if any. Older results nobody took are dropped: only the current host list
  // matters.
  std::optional<DiscoveryResult> take();

  // Waits up to `limit` for a result nobody has taken yet, then takes it (as
  // take() does). Called right after construction, this is the first run's
  // result, which the driver needs before it can start any worker. nullopt
  // when `limit` passes first.
  std::optional<DiscoveryResult> wait_first(std::chrono::milliseconds limit);

 private:
  void run_loop();

  const std::string script_;
  const Environment env_;
  const int default_slots_;
  const std::chrono::milliseconds interval_;
  const std::chrono::milliseconds timeout_;
  // Signalled once by the destructor; stays readable, so both the pause
  // between runs and a script in progress see it.
  rendezvous::net::WakeupFd stop_;

  std::mutex mutex_;
  std::condition_variable result_ready_;
  std::optional<DiscoveryResult> latest_;  // guarded by mutex_

  std::thread thread_;  // last: starts once everything above exists
};

}  // namespace kolo::runner::elastic
