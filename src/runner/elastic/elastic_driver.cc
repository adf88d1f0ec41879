#include "runner/elastic/elastic_driver.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <signal.h>

#include <algorithm>
#include <cctype>
#include <memory>
#include <set>
#include <utility>
#include <vector>

#include "common/error.h"
#include "common/log_limiter.h"
#include "common/settings/values.h"
#include "common/untrusted_text.h"
#include "rendezvous/elastic_protocol.h"
#include "rendezvous/tcp_store_client.h"
#include "runner/elastic/host_discovery.h"
#include "runner/elastic/host_registry.h"
#include "runner/elastic/round_plan.h"
#include "runner/launch_context.h"
#include "runner/launcher.h"
#include "runner/signal_capture.h"

namespace kolo::runner::elastic {
namespace {

namespace protocol = rendezvous::elastic;
using Clock = std::chrono::steady_clock;
using Assignment = protocol::Assignment;

// How often the driver looks at the store: often while a round forms (the
// recovery time depends on it), seldom otherwise.
constexpr auto kFormingTick = std::chrono::milliseconds(10);
constexpr auto kIdleTick = std::chrono::milliseconds(100);
// Workers wait for their place a little longer than the driver tries to
// form a round, so the driver's message is the one the user sees.
constexpr auto kJoinMargin = std::chrono::seconds(30);
// A worker left out of a round gets this long to ask to join (and be told
// to leave, which lets it exit cleanly) before it is stopped.
constexpr auto kLeaveGrace = std::chrono::seconds(5);
// A discovery script that fails anew at every run is reported this seldom.
constexpr auto kDiscoveryLogInterval = std::chrono::seconds(10);

Assignment refusal(Assignment::Kind kind, std::string reason) {
  Assignment a;
  a.kind = kind;
  a.reason = std::move(reason);
  return a;
}

// What kind of failure a discovery error is, without what varies between
// runs of a script printing garbage: the words before the first ':', less
// quoted text and numbers ("line  " for any bad output line, "exited with
// code " for a failing script).
std::string problem_kind(std::string_view error) {
  std::string kind;
  bool quoted = false;
  for (char c : error.substr(0, error.find(':'))) {
    if (c == '\'') quoted = !quoted;
    if (!quoted && c != '\'' && !std::isdigit(static_cast<unsigned char>(c))) kind += c;
  }
  return kind;
}

std::string seconds_text(std::chrono::milliseconds d) {
  return fmt::format("{:.3g} s", d.count() / 1000.0);
}

class ElasticDriver : public JobController {
 public:
  ElasticDriver(const LaunchOptions& options, LaunchContext& context, rendezvous::Store& store,
                HostDiscovery* discovery, int host_failures)
      : options_(options),
        elastic_(options.elastic),
        context_(context),
        store_(store),
        discovery_(discovery),
        registry_(options.elastic.blacklist_cooldown, host_failures) {}

  void on_exit(Job& job, size_t index) override;
  Clock::time_point on_tick(Job& job, Clock::time_point now) override;

 private:
  struct Worker {
    int id = 0;
    size_t job_index = 0;
    std::string host;
    int host_slot = 0;
    int rank = -1;         // in the last round it joined; -1 before
    int64_t answered = 0;  // joins answered so far
    bool alive = true;
    bool leaving = false;                      // left out of a round: its exit is expected
    bool in_round = false;                     // a member of the current round
    std::optional<Clock::time_point> stop_at;  // leaving: SIGTERM then unless it left by itself
  };

  void poll_hosts(Job& job, Clock::time_point now);
  void announce(const HostChanges& changes, Job& job);
  void poll_arrivals(Job& job);
  int64_t pending_joins(const Worker& w);
  void form_round(Job& job, Clock::time_point now);
  // The current round is over: a new one forms, and its members learn why.
  void give_up_round(const std::string& reason);
  void publish_round(Job& job, const RoundPlan& plan);
  void start_worker(Job& job, const PlannedMember& member);
  void answer(Worker& w, const Assignment& a);
  void leave(Job& job, Worker& w, const std::string& why);
  void finish_if_done(Job& job);
  std::string judge_failure(Job& job, const Worker& w, const ExitStatus& status);
  void below_min_np(Job& job, int possible, Clock::time_point now);
  void fail(Job& job, const std::string& message) { job.stop(1, "job failed: " + message); }
  Worker* find(size_t job_index);
  std::string describe(const Worker& w) const;
  int alive_count() const;

  const LaunchOptions& options_;
  const ElasticOptions& elastic_;
  LaunchContext& context_;
  rendezvous::Store& store_;
  HostDiscovery* discovery_;  // null: the fixed hosts of -H / --hostfile
  HostRegistry registry_;
  bool hosts_known_ = false;
  std::string last_discovery_error_;
  // Discovery failures, limited; the lines wait here for a Job to note them.
  std::vector<std::string> discovery_notes_;
  LogLimiter discovery_log_{kDiscoveryLogInterval, [this](LogLevel, std::string_view line) {
                              discovery_notes_.emplace_back(line);
                            }};

  std::vector<Worker> workers_;
  int next_worker_id_ = 0;
  int64_t round_ = 0;      // the last round formed
  int64_t hosts_seq_ = 0;  // the last host update announced
  int64_t arrivals_seen_ = 0;
  bool forming_ = true;  // the first round forms at the start
  std::optional<Clock::time_point> forming_since_;
  std::optional<Clock::time_point> below_min_since_;
  std::string forming_reason_;
  // The round forms because a member asked to join again; a failure seen
  // before it forms is the likelier cause and replaces the reason.
  bool reason_is_a_rejoin_ = false;
  bool finishing_ = false;  // a worker succeeded: no more rounds
  std::string first_failure_after_success_;
};

std::string ElasticDriver::describe(const Worker& w) const {
  if (w.rank >= 0) return fmt::format("worker {} (rank {}, host {})", w.id, w.rank, w.host);
  return fmt::format("worker {} (host {})", w.id, w.host);
}

ElasticDriver::Worker* ElasticDriver::find(size_t job_index) {
  for (auto& w : workers_)
    if (w.job_index == job_index) return &w;
  return nullptr;
}

int ElasticDriver::alive_count() const {
  return static_cast<int>(
      std::count_if(workers_.begin(), workers_.end(), [](const Worker& w) { return w.alive; }));
}

// --- exits ---------------------------------------------------------------

void ElasticDriver::on_exit(Job& job, size_t index) {
  Worker* w = find(index);
  if (w == nullptr) return;
  w->alive = false;
  w->in_round = false;
  if (job.stopping()) return;
  const ExitStatus status = job.status(index).value_or(ExitStatus{127, 0});
  if (w->leaving) {
    finish_if_done(job);
    return;
  }
  // Named by its rank in the current round, not the one it started with.
  RankLaunch current = job.launch(index);
  if (w->rank >= 0) current.slot.rank = w->rank;
  const std::string how = describe_rank_end(current, status);
  if (status.ok()) {
    if (!finishing_) {
      finishing_ = true;
      job.note(fmt::format("{} finished; waiting for the other workers to finish", describe(*w)));
    }
    finish_if_done(job);
    return;
  }
  if (finishing_) {
    if (first_failure_after_success_.empty()) first_failure_after_success_ = how;
    finish_if_done(job);
    return;
  }
  job.note(fmt::format("{}; {}", how, judge_failure(job, *w, status)));
  if (alive_count() == 0) {
    fail(job, fmt::format("every worker has failed; the last: {}", how));
    return;
  }
  // Survivors notice a dead peer at once and ask to join again; the driver
  // may see that before the death itself, and the death is what the user
  // wants to read as the reason.
  const std::string reason = fmt::format("{} failed", describe(*w));
  if (!forming_) {
    give_up_round(reason);
  } else if (reason_is_a_rejoin_) {
    forming_reason_ = reason;
  }
  reason_is_a_rejoin_ = false;
}

void ElasticDriver::give_up_round(const std::string& reason) {
  forming_ = true;
  forming_since_.reset();
  forming_reason_ = reason;
  // Members may still be meeting their peers (a member can die a moment
  // after it was placed): they watch this key instead of waiting the start
  // timeout out for an address that will never come.
  if (round_ > 0)
    store_.set(protocol::round_over_key(round_),
               rendezvous::to_bytes(fmt::format("kolorun gave round {} up: {}", round_, reason)));
}

// Counts the failure against the worker's host and says what follows. Only
// the host's own record decides: its other workers keep running either way.
std::string ElasticDriver::judge_failure(Job& job, const Worker& w, const ExitStatus& status) {
  const auto now = Clock::now();
  HostRegistry::FailureVerdict verdict;
  if (job.launch(w.job_index).remote && status.signal == 0 && status.code == 255) {
    // ssh could not reach the host: another worker there would fail the same way.
    verdict.blacklisted = true;
    verdict.until = registry_.blacklist(w.host, now);
  } else {
    verdict = registry_.record_failure(w.host, now);
  }
  if (!verdict.blacklisted)
    return fmt::format("failure {} of {} on host {} before it is blacklisted", verdict.failures,
                       registry_.failures_to_blacklist(), w.host);
  const std::string how_long =
      verdict.until ? "for " + seconds_text(std::chrono::duration_cast<std::chrono::milliseconds>(
                                   *verdict.until - now))
                    : std::string("for the rest of the job");
  return fmt::format("host {} is blacklisted {}", w.host, how_long);
}

void ElasticDriver::finish_if_done(Job& job) {
  if (!finishing_ || job.stopping()) return;
  for (const auto& w : workers_)
    if (w.alive && !w.leaving) return;
  if (first_failure_after_success_.empty()) {
    job.stop(0, "");
  } else {
    fail(job, first_failure_after_success_ + " (after another worker had finished)");
  }
}

// --- hosts ---------------------------------------------------------------

void ElasticDriver::poll_hosts(Job& job, Clock::time_point now) {
  HostChanges changes;
  if (discovery_ == nullptr) {
    if (!hosts_known_) {
      registry_.update(options_.hosts, now);
      hosts_known_ = true;
    }
  } else if (auto result = discovery_->take()) {
    if (!result->ok) {
      // A script failing the same way is reported once; one failing anew at
      // every run (changing garbage) once per interval, with a count.
      if (result->error != last_discovery_error_)
        discovery_log_.report(
            LogLevel::kWarning, problem_kind(result->error),
            fmt::format("host discovery script '{}' failed: {} (retrying every {})",
                        untrusted_text(elastic_.discovery_script, 200), result->error,
                        seconds_text(elastic_.discovery_interval)),
            now);
      last_discovery_error_ = result->error;
      hosts_known_ = true;  // known to be none for now: the --min-np wait starts
    } else {
      if (!last_discovery_error_.empty()) job.note("host discovery script works again");
      last_discovery_error_.clear();
      changes = registry_.update(result->hosts, now);
      for (const auto& h : result->hosts) context_.saw_host(h.host);
      hosts_known_ = true;
    }
  }
  discovery_log_.flush(now);
  for (const std::string& line : std::exchange(discovery_notes_, {})) job.note(line);
  const HostChanges cooled = registry_.refresh(now);
  changes.added.insert(changes.added.end(), cooled.added.begin(), cooled.added.end());
  changes.removed.insert(changes.removed.end(), cooled.removed.begin(), cooled.removed.end());
  if (changes.any() && round_ > 0) announce(changes, job);
}

void ElasticDriver::announce(const HostChanges& changes, Job& job) {
  unsigned bits = 0;
  if (!changes.added.empty()) bits |= protocol::kHostsAdded;
  if (!changes.removed.empty()) bits |= protocol::kHostsRemoved;
  ++hosts_seq_;
  // The update first, then the seq that points at it (workers read in that order).
  store_.set(protocol::host_update_key(hosts_seq_),
             rendezvous::to_bytes(protocol::encode_host_change(bits)));
  store_.set(protocol::hosts_seq_key(), rendezvous::to_bytes(std::to_string(hosts_seq_)));
  std::string what;
  if (!changes.added.empty()) what = fmt::format("added {}", fmt::join(changes.added, ", "));
  if (!changes.removed.empty())
    what += fmt::format("{}removed {}", what.empty() ? "" : "; ", fmt::join(changes.removed, ", "));
  job.note(fmt::format("hosts changed ({}); the workers re-form at their next commit", what));
  if (!forming_ && !finishing_) {
    forming_ = true;
    forming_since_.reset();
    forming_reason_ = "hosts changed";
  }
}

// --- joins ---------------------------------------------------------------

int64_t ElasticDriver::pending_joins(const Worker& w) {
  return protocol::read_counter(store_, protocol::joins_key(std::to_string(w.id))) - w.answered;
}

void ElasticDriver::poll_arrivals(Job& job) {
  const int64_t arrivals = protocol::read_counter(store_, protocol::arrivals_key());
  if (arrivals == arrivals_seen_) return;
  arrivals_seen_ = arrivals;
  for (auto& w : workers_) {
    if (!w.alive || pending_joins(w) <= 0) continue;
    if (finishing_) {
      answer(w,
             refusal(Assignment::Kind::kAborted, "another worker already finished the training"));
      continue;
    }
    if (w.leaving) {
      answer(w, refusal(Assignment::Kind::kRemoved, "its host left the job"));
      continue;
    }
    // A member asking again left its round (an error, or a host update):
    // the round is over for everyone.
    if (w.in_round && !forming_) {
      give_up_round(fmt::format("{} left its round", describe(w)));
      reason_is_a_rejoin_ = true;
    }
  }
}

void ElasticDriver::answer(Worker& w, const Assignment& a) {
  ++w.answered;
  store_.set(protocol::assignment_key(std::to_string(w.id), w.answered),
             rendezvous::to_bytes(protocol::encode_assignment(a)));
}

void ElasticDriver::leave(Job& job, Worker& w, const std::string& why) {
  if (w.leaving) return;
  w.leaving = true;
  w.in_round = false;
  job.note(fmt::format("{} leaves the job: {}", describe(w), why));
  if (w.alive && pending_joins(w) > 0) answer(w, refusal(Assignment::Kind::kRemoved, why));
}

// --- rounds --------------------------------------------------------------

void ElasticDriver::start_worker(Job& job, const PlannedMember& member) {
  Worker w;
  w.id = next_worker_id_++;
  w.host = member.slot.host;
  w.host_slot = member.host_slot;
  Environment env;
  env["KOLO_ELASTIC"] = "1";
  env["KOLO_ELASTIC_WORKER"] = std::to_string(w.id);
  env["KOLO_ELASTIC_TIMEOUT"] = std::to_string(
      std::chrono::duration_cast<std::chrono::seconds>(elastic_.timeout + kJoinMargin).count());
  // A new host in an existing job: its first init is a join like any other.
  w.job_index = job.start(context_.make(member.slot, w.id, env));
  workers_.push_back(w);
  if (options_.verbose)
    job.note(fmt::format("started worker {} on {} (slot {})", w.id, w.host, w.host_slot));
}

void ElasticDriver::form_round(Job& job, Clock::time_point now) {
  if (!forming_since_) forming_since_ = now;
  std::vector<RunningWorker> running;
  for (const auto& w : workers_)
    if (w.alive && !w.leaving) running.push_back({w.id, w.host, w.host_slot});
  const int cap = round_ == 0 ? options_.np : elastic_.max_np.value_or(1 << 30);
  // Blacklisted hosts stay in the plan, closed: their healthy workers keep
  // their places, but nothing new starts there.
  std::set<std::string> closed;
  for (const auto& h : registry_.blacklisted(now)) closed.insert(h);
  RoundPlan plan = plan_round(registry_.discovered(), running, cap, closed);
  for (int id : plan.left_out)
    for (auto& w : workers_)
      if (w.id == id) leave(job, w, "its host is no longer usable or the job is at --max-np");

  const int size = static_cast<int>(plan.members.size());
  if (size < elastic_.min_np) {
    below_min_np(job, size, now);
    return;
  }
  below_min_since_.reset();
  for (auto& member : plan.members)
    if (!member.worker_id) {
      start_worker(job, member);
      member.worker_id = workers_.back().id;
    }

  std::vector<std::string> missing;
  for (const auto& member : plan.members)
    for (auto& w : workers_)
      if (w.id == *member.worker_id && pending_joins(w) <= 0) missing.push_back(describe(w));
  if (!missing.empty()) {
    if (now - *forming_since_ >= elastic_.timeout)
      fail(job, fmt::format("round {} did not form within {} (--elastic-timeout); still waiting "
                            "for {}",
                            round_ + 1, seconds_text(elastic_.timeout), fmt::join(missing, ", ")));
    return;
  }
  if (round_ > 0 && elastic_.reset_limit && round_ - 1 >= *elastic_.reset_limit) {
    fail(job, fmt::format("the job needs a new round ({}) but --reset-limit {} is reached",
                          forming_reason_, *elastic_.reset_limit));
    return;
  }
  publish_round(job, plan);
}

// Fewer workers are possible than --min-np. Only a discovery script or a
// blacklisting that ends can add slots; without either nothing will change,
// so the job ends now instead of after --elastic-timeout.
void ElasticDriver::below_min_np(Job& job, int possible, Clock::time_point now) {
  const std::vector<std::string> out = registry_.blacklisted(now);
  const std::string blacklisted =
      out.empty() ? std::string() : fmt::format("; blacklisted: {}", fmt::join(out, ", "));
  const auto cooldown_end = registry_.next_cooldown_end();
  if (discovery_ == nullptr && !cooldown_end) {
    fail(job, fmt::format("{} of at least {} workers (--min-np) possible, and no host can be "
                          "added (no --host-discovery-script; usable slots: {}{})",
                          possible, elastic_.min_np, registry_.usable_slots(), blacklisted));
    return;
  }
  if (!below_min_since_) {
    // The wait began when the round began to form, not when the hosts came.
    below_min_since_ = forming_since_.value_or(now);
    std::string what = discovery_ != nullptr ? "for the host discovery script to report more hosts"
                                             : "for a blacklisted host's cooldown to end";
    if (discovery_ != nullptr && cooldown_end) what += " or a blacklisted host's cooldown to end";
    job.note(
        fmt::format("{} of at least {} workers possible (--min-np); waiting up to {} {} "
                    "(usable slots: {}{})",
                    possible, elastic_.min_np, seconds_text(elastic_.timeout), what,
                    registry_.usable_slots(), blacklisted));
  } else if (now - *below_min_since_ >= elastic_.timeout) {
    // A script that keeps failing is the root cause; its warning may be far
    // above (or held back by the rate limit), so the last line repeats it.
    const std::string script_failing =
        last_discovery_error_.empty()
            ? std::string()
            : fmt::format("; the host discovery script failed: {}", last_discovery_error_);
    fail(job, fmt::format("fewer than --min-np {} workers were possible for {} (usable slots: "
                          "{}{}){}",
                          elastic_.min_np, seconds_text(elastic_.timeout), registry_.usable_slots(),
                          blacklisted, script_failing));
  }
}

void ElasticDriver::publish_round(Job& job, const RoundPlan& plan) {
  ++round_;
  int newcomers = 0;
  for (const auto& member : plan.members)
    for (const auto& w : workers_)
      if (w.id == *member.worker_id && w.rank < 0) ++newcomers;
  std::vector<std::string> hosts;
  for (const auto& member : plan.members) {
    for (auto& w : workers_) {
      if (w.id != *member.worker_id) continue;
      Assignment a;
      a.round = round_;
      a.rank = member.slot.rank;
      a.size = member.slot.size;
      a.local_rank = member.slot.local_rank;
      a.local_size = member.slot.local_size;
      a.cross_rank = member.slot.cross_rank;
      a.cross_size = member.slot.cross_size;
      a.host = member.slot.host;
      a.hosts_seq = hosts_seq_;
      a.newcomers = newcomers;
      answer(w, a);
      w.rank = member.slot.rank;
      w.in_round = true;
    }
    if (std::find(hosts.begin(), hosts.end(), member.slot.host) == hosts.end())
      hosts.push_back(member.slot.host);
  }
  if (round_ > 1 || options_.verbose)
    job.note(fmt::format("round {}: {} workers on {}{}", round_, plan.members.size(),
                         fmt::join(hosts, ", "),
                         forming_reason_.empty() ? "" : " (" + forming_reason_ + ")"));
  forming_ = false;
  forming_since_.reset();
  forming_reason_.clear();
  reason_is_a_rejoin_ = false;
  // Workers left out that have not asked to join yet get a moment to do so
  // (and exit by themselves); then they are stopped.
  for (auto& w : workers_)
    if (w.leaving && w.alive && !w.stop_at) w.stop_at = Clock::now() + kLeaveGrace;
}

Clock::time_point ElasticDriver::on_tick(Job& job, Clock::time_point now) {
  for (auto& w : workers_)
    if (w.leaving && w.alive && w.stop_at && now >= *w.stop_at) {
      w.stop_at.reset();
      job.signal(w.job_index, SIGTERM);
    }
  try {
    // --elastic-timeout counts from when the round began to form, also while
    // no host list has come yet (a hanging discovery script).
    if (forming_ && !forming_since_) forming_since_ = now;
    poll_hosts(job, now);
    if (job.stopping()) return now + kIdleTick;
    if (forming_ && !hosts_known_ && now - *forming_since_ >= elastic_.timeout) {
      fail(job, fmt::format("the host discovery script listed no hosts within {} "
                            "(--elastic-timeout): its first run has not finished",
                            seconds_text(elastic_.timeout)));
      return now + kIdleTick;
    }
    poll_arrivals(job);
    if (forming_ && !finishing_ && hosts_known_ && !job.stopping()) form_round(job, now);
  } catch (const InvalidArgument& e) {
    job.stop(2, e.what());
  } catch (const Error& e) {
    fail(job, fmt::format("elastic driver: {}", e.what()));
  }
  auto next = now + (forming_ ? kFormingTick : kIdleTick);
  if (auto cooldown = registry_.next_cooldown_end()) next = std::min(next, *cooldown);
  return next;
}

}  // namespace

JobResult run_elastic(const LaunchOptions& options, int stdout_fd, int stderr_fd) {
  std::vector<std::string> known;
  for (const auto& h : options.hosts) known.push_back(h.host);
  const bool discovering = !options.elastic.discovery_script.empty();
  // Signals are captured before the store's thread starts, so it inherits the mask.
  SignalCapture signals;
  LaunchContext context(options, known, /*any_remote_later=*/discovering);

  rendezvous::TcpStoreClientOptions client;
  client.host = "127.0.0.1";
  client.port = static_cast<uint16_t>(context.rendezvous().port);
  client.secret = context.rendezvous().secret;
  rendezvous::TcpStoreClient store(client);

  std::unique_ptr<HostDiscovery> discovery;
  if (discovering)
    discovery = std::make_unique<HostDiscovery>(
        options.elastic.discovery_script, options.elastic.slots_per_host,
        options.elastic.discovery_interval, std::chrono::seconds(30));
  const settings::Values values =
      settings::Values::Read([&](std::string_view name) -> std::optional<std::string> {
        if (std::string given = options.setting(std::string(name)); !given.empty()) return given;
        return settings::from_environment(name);
      });
  ElasticDriver driver(options, context, store, discovery.get(),
                       static_cast<int>(values.integer("KOLO_ELASTIC_HOST_FAILURES")));
  Job job({}, job_options(options, stdout_fd, stderr_fd, signals.fd()), &driver);
  return job.run();
}

}  // namespace kolo::runner::elastic
