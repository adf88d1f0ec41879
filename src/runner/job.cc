#include "runner/job.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>

#include "common/errno_text.h"
#include "common/error.h"
#include "rendezvous/socket_util.h"
#include "runner/output_mux.h"
#include "runner/rank_supervisor.h"
#include "runner/remote_exec.h"
#include "runner/signal_capture.h"

namespace kolo::runner {
namespace {

constexpr auto kDrainLimit = std::chrono::seconds(2);  // output after the last exit
// After the SIGKILL deadline, how long a remote helper (the "signal 9"
// must cross before ssh dies) or a local rank supervisor (ending the rank's
// tree) gets before its own process group is killed.
constexpr auto kHelperKillDelay = std::chrono::seconds(2);
// How long the launch waits for a supervised rank's program to start before
// it goes on with the next rank anyway (a very slow machine, not a failure).
constexpr std::chrono::milliseconds kStartWait{10'000};

int ms_until(std::chrono::steady_clock::time_point t) {
  auto left =
      std::chrono::duration_cast<std::chrono::milliseconds>(t - std::chrono::steady_clock::now())
          .count();
  return static_cast<int>(std::clamp<int64_t>(left, 0, 60'000));
}

}  // namespace

struct Job::Rank {
  RankLaunch launch;
  std::optional<ChildProcess> process;
  UniqueFd out[2];   // stdout, stderr pipes
  UniqueFd control;  // remote: ssh's stdin
  UniqueFd started;  // supervised: its stdin, closed by it once the program runs
  std::string control_pending;
  std::optional<ExitStatus> status;
  std::vector<int> signals_sent;  // by this launcher, to tell its own kills from the cause
};

namespace {

// The signal that ended a rank: a local one directly, a remote one as the
// helper's exit code 128+N.
int ending_signal(const RankLaunch& rank, const ExitStatus& status) {
  if (status.signal != 0) return status.signal;
  if (rank.remote && status.code > 128 && status.code < 128 + NSIG) return status.code - 128;
  return 0;
}

}  // namespace

std::string describe_rank_end(const RankLaunch& rank, const ExitStatus& status) {
  const std::string who = fmt::format("rank {} (host {})", rank.slot.rank, rank.slot.host);
  if (rank.remote && status.signal == 0) {
    if (status.code == 255)
      return who +
             ": ssh failed with exit code 255 (cannot connect or log in; see its stderr above)";
    if (status.code == 125) return who + ": the remote helper failed (see its stderr above)";
    if (status.code == 127)
      return who +
             " exited with code 127: not found there (the program, or kolorun itself, which " +
             "must be at the same path on every host)";
    if (status.code > 128 && status.code < 128 + NSIG)
      return fmt::format("{} {}", who, ExitStatus{0, status.code - 128}.describe());
  }
  return fmt::format("{} {}", who, status.describe());
}

Job::Job(std::vector<RankLaunch> ranks, JobOptions options, JobController* controller)
    : options_(std::move(options)), controller_(controller) {
  ranks_.resize(ranks.size());
  for (size_t i = 0; i < ranks.size(); ++i) ranks_[i].launch = std::move(ranks[i]);
  result_.ranks.resize(ranks_.size());
}

Job::~Job() = default;  // ChildProcess kills and reaps anything still running

void Job::note(const std::string& line) {
  write_fully(options_.stderr_fd, "kolorun: " + line + "\n");
}

void Job::start_one(size_t i) {
  Rank& r = ranks_[i];
  try {
    r.process.emplace(r.launch.spawn);
  } catch (const Error& e) {
    const std::string why = fmt::format("cannot start rank {} (host {}): {}", r.launch.slot.rank,
                                        r.launch.slot.host, e.what());
    r.status = ExitStatus{127, 0};
    result_.ranks[i] = r.status;
    if (controller_ != nullptr) {
      note(why);
      controller_->on_exit(*this, i);
      return;
    }
    // The job cannot be whole: run() starts no further rank (a fork that
    // failed for want of processes or memory fails for the next one too)
    // and the ones already started are stopped. One line says why.
    std::string started;
    if (i > 0) started = fmt::format("; the {} started before it were stopped", i);
    stop(1, "job failed: " + why + started);
    return;
  }
  r.out[0] = r.process->release_stdout();
  r.out[1] = r.process->release_stderr();
  if (r.launch.supervised) r.started = r.process->release_stdin();
  if (r.launch.remote) {
    r.control = r.process->release_stdin();
    if (r.control.valid()) {
      rendezvous::net::set_nonblocking(r.control.get());
      r.control_pending = r.launch.remote_request;
      flush_control(r);
    }
  }
  if (options_.verbose)
    note(fmt::format("started rank {} on {} (pid {}{})", r.launch.slot.rank, r.launch.slot.host,
                     r.process->pid(), r.launch.remote ? ", ssh" : ""));
}

size_t Job::start(RankLaunch launch) {
  ranks_.emplace_back();
  ranks_.back().launch = std::move(launch);
  result_.ranks.emplace_back();
  const size_t index = ranks_.size() - 1;
  if (running_) start_one(index);
  return index;
}

void Job::signal(size_t index, int sig) {
  deliver(ranks_.at(index), sig);
}

size_t Job::count() const {
  return ranks_.size();
}

bool Job::running(size_t index) const {
  const Rank& r = ranks_.at(index);
  return r.process.has_value() && !r.status;
}

const std::optional<ExitStatus>& Job::status(size_t index) const {
  return ranks_.at(index).status;
}

const RankLaunch& Job::launch(size_t index) const {
  return ranks_.at(index).launch;
}

void Job::stop(int exit_code, std::string message) {
  if (!outcome_) outcome_.emplace(exit_code, std::move(message));
  begin_stop(SIGTERM);
}

void Job::flush_control(Rank& r) {
  while (r.control.valid() && !r.control_pending.empty()) {
    ssize_t n = ::write(r.control.get(), r.control_pending.data(), r.control_pending.size());
    if (n > 0) {
      r.control_pending.erase(0, static_cast<size_t>(n));
    } else if (n < 0 && (errno == EAGAIN || errno == EINTR)) {
      return;  // the rest on POLLOUT
    } else {
      r.control.reset();  // ssh is gone; its exit tells the story
      r.control_pending.clear();
    }
  }
}

void Job::deliver(Rank& r, int sig) {
  if (r.status || !r.process) return;
  r.signals_sent.push_back(sig);
  if (r.launch.remote && r.control.valid()) {
    r.control_pending += signal_line(sig);
    flush_control(r);
  } else {
    r.process->signal_group(sig);
  }
}

void Job::begin_stop(int sig) {
  if (stopping_) return;
  stopping_ = true;
  for (auto& r : ranks_) deliver(r, sig);
  kill_at_ = Clock::now() + options_.kill_grace;
}

void Job::escalate() {
  kill_at_.reset();
  bool any_helped = false;
  for (auto& r : ranks_) {
    if (r.status || !r.process) continue;
    if (r.launch.supervised) {
      // A SIGKILL of the group would take the supervisor too, before it
      // ends what left the group; it kills everything itself, then itself.
      deliver(r, supervisor_kill_signal());
      r.signals_sent.push_back(SIGKILL);
    } else {
      deliver(r, SIGKILL);
    }
    any_helped |= r.launch.remote || r.launch.supervised;
  }
  if (any_helped) helper_kill_at_ = Clock::now() + kHelperKillDelay;
}

void Job::on_exit(size_t index) {
  Rank& r = ranks_[index];
  auto status = r.process->poll_exit();
  if (!status) return;
  r.status = status;
  r.control.reset();  // EOF to the remote helper, were it still there
  result_.ranks[index] = status;
  if (options_.verbose) note(describe_rank_end(r.launch, *status));
  if (controller_ != nullptr) {
    controller_->on_exit(*this, index);
    return;
  }
  if (status->ok()) return;
  if (!stopping_) {
    result_.first_failure = first_exit_ = static_cast<int>(index);
    begin_stop(SIGTERM);
    return;
  }
  const int sig = ending_signal(r.launch, *status);
  const bool ours =
      std::find(r.signals_sent.begin(), r.signals_sent.end(), sig) != r.signals_sent.end();
  const Rank* named =
      result_.first_failure >= 0 ? &ranks_[static_cast<size_t>(result_.first_failure)] : nullptr;
  if (sig != 0 && !ours && named != nullptr && ending_signal(named->launch, *named->status) == 0)
    result_.first_failure = static_cast<int>(index);
}

void Job::await_start(size_t index) {
  Rank& r = ranks_[index];
  if (!r.launch.supervised || !r.process || r.status || !r.started.valid()) return;
  // The write end of the supervisor's stdin reports POLLERR once it closed
  // the read end; the exit fd is readable once it ended.
  pollfd fds[2] = {{r.started.get(), 0, 0}, {r.process->exit_fd(), POLLIN, 0}};
  ::poll(fds, 2, static_cast<int>(kStartWait.count()));
  r.started.reset();
  if (fds[1].revents != 0) on_exit(index);
}

void Job::read_output(Rank& r, int which) {
  char buffer[65536];
  ssize_t n = ::read(r.out[which].get(), buffer, sizeof buffer);
  if (n < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (n <= 0) {
    r.out[which].reset();
    mux_->finish(r.launch.tag, static_cast<OutputStream>(which));
    return;
  }
  mux_->add(r.launch.tag, static_cast<OutputStream>(which),
            std::string_view(buffer, static_cast<size_t>(n)));
}

bool Job::all_reaped() const {
  // A rank never started (the job stopped before its turn) has nothing to reap.
  for (const auto& r : ranks_)
    if (r.process && !r.status) return false;
  return true;
}

bool Job::output_open() const {
  for (const auto& r : ranks_)
    if (r.out[0].valid() || r.out[1].valid()) return true;
  return false;
}

void Job::on_signal(int sig) {
  if (stopping_) {
    note(fmt::format("got SIG{} again: killing every rank now", ::sigabbrev_np(sig)));
    if (result_.interrupted_by == 0) result_.interrupted_by = sig;
    escalate();
    return;
  }
  result_.interrupted_by = sig;
  note(fmt::format("got SIG{}: passing it to every rank (SIGKILL in {:.3g} s; again to kill now)",
                   ::sigabbrev_np(sig), options_.kill_grace.count() / 1000.0));
  begin_stop(sig == SIGHUP ? SIGTERM : sig);
}

void Job::finish_result() {
  if (outcome_ && result_.interrupted_by == 0) {
    result_.exit_code = outcome_->first;
    result_.message = outcome_->second;
  } else if (result_.first_failure >= 0) {
    const Rank& r = ranks_[static_cast<size_t>(result_.first_failure)];
    result_.exit_code = 1;
    result_.message =
        "job failed: " + describe_rank_end(r.launch, r.status.value_or(ExitStatus{127, 0}));
    if (first_exit_ != result_.first_failure) {
      const Rank& first = ranks_[static_cast<size_t>(first_exit_)];
      result_.message += "; the first to exit was " +
                         describe_rank_end(first.launch, first.status.value_or(ExitStatus{}));
    }
  } else if (result_.interrupted_by != 0) {
    result_.exit_code = 128 + result_.interrupted_by;
    result_.message = fmt::format("job stopped by SIG{}", ::sigabbrev_np(result_.interrupted_by));
  } else if (result_.timed_out) {
    result_.exit_code = 1;
    result_.message = fmt::format("job did not finish within {:.3g} s; its ranks were stopped",
                                  options_.job_timeout.count() / 1000.0);
  } else {
    result_.exit_code = 0;
  }
}

JobResult Job::run() {
  int world = 0;
  for (const auto& r : ranks_) world = std::max(world, r.launch.tag + 1);
  mux_ =
      std::make_unique<OutputMux>(options_.stdout_fd, options_.stderr_fd, options_.output, world);
  std::optional<Clock::time_point> timeout_at;
  if (options_.job_timeout.count() > 0) timeout_at = Clock::now() + options_.job_timeout;
  running_ = true;
  for (size_t i = 0, n = ranks_.size(); i < n && !stopping_; ++i) {
    start_one(i);
    // A rank whose program could not be started (its supervisor's fork or
    // exec was refused: the system is out of processes or memory) stops the
    // launch here rather than after every other rank was tried.
    await_start(i);
  }

  enum Kind { kOut = 0, kErr = 1, kExit, kControl, kSignal };
  std::vector<pollfd> fds;
  std::vector<std::pair<size_t, Kind>> owners;
  while (true) {
    auto now = Clock::now();
    std::optional<Clock::time_point> controller_at;
    if (controller_ != nullptr && !stopping_) {
      controller_at = controller_->on_tick(*this, now);
      now = Clock::now();
    }
    // A controller's job ends when it says so (a job with no process left
    // may still be waiting for hosts).
    if (all_reaped() && (controller_ == nullptr || stopping_)) {
      if (!output_open()) break;
      if (!drain_until_) drain_until_ = now + kDrainLimit;
      if (now >= *drain_until_) break;  // a daemon a rank left behind holds the pipe; stop waiting
    }
    if (kill_at_ && now >= *kill_at_) escalate();
    if (helper_kill_at_ && now >= *helper_kill_at_) {
      helper_kill_at_.reset();
      for (auto& r : ranks_)
        if ((r.launch.remote || r.launch.supervised) && !r.status && r.process)
          r.process->signal_group(SIGKILL);
    }
    if (timeout_at && !stopping_ && now >= *timeout_at) {
      result_.timed_out = true;
      begin_stop(SIGTERM);
    }

    fds.clear();
    owners.clear();
    auto watch = [&](int fd, short events, size_t index, Kind kind) {
      fds.push_back({fd, events, 0});
      owners.emplace_back(index, kind);
    };
    if (options_.signal_fd >= 0) watch(options_.signal_fd, POLLIN, 0, kSignal);
    for (size_t i = 0; i < ranks_.size(); ++i) {
      Rank& r = ranks_[i];
      for (int s = 0; s < 2; ++s)
        if (r.out[s].valid()) watch(r.out[s].get(), POLLIN, i, static_cast<Kind>(s));
      if (r.process && !r.status) watch(r.process->exit_fd(), POLLIN, i, kExit);
      if (r.control.valid() && !r.control_pending.empty())
        watch(r.control.get(), POLLOUT, i, kControl);
    }
    int timeout = 1000;  // re-check deadlines at least this often
    for (const auto& t : {kill_at_, helper_kill_at_, drain_until_,
                          stopping_ ? std::nullopt : timeout_at, controller_at})
      if (t) timeout = std::min(timeout, ms_until(*t));
    if (::poll(fds.data(), fds.size(), timeout) < 0 && errno != EINTR)
      throw IoError(fmt::format("poll: {}", errno_text(errno)));

    for (size_t k = 0; k < fds.size(); ++k) {
      if (fds[k].revents == 0) continue;
      auto [index, kind] = owners[k];
      Rank& r = ranks_[index];
      switch (kind) {
        case kOut:
        case kErr:
          if (r.out[kind].valid()) read_output(r, kind);
          break;
        case kExit:
          on_exit(index);
          break;
        case kControl:
          flush_control(r);
          break;
        case kSignal:
          if (int sig = take_signal(options_.signal_fd); sig != 0) on_signal(sig);
          break;
      }
    }
  }
  for (auto& r : ranks_)
    for (int s = 0; s < 2; ++s)
      if (r.out[s].valid()) {
        r.out[s].reset();
        mux_->finish(r.launch.tag, static_cast<OutputStream>(s));
      }
  finish_result();
  return result_;
}

}  // namespace kolo::runner
