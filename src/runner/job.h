// Job: runs the processes of one launch to the end. One thread, one poll()
// loop over every rank's output pipes, exit pidfds, ssh control pipes and
// the launcher's signals, so there is nothing to lock.
//
// Lifecycle: when a rank fails (non-zero exit, signal, ssh failure), a
// signal reaches the launcher, or the job's time limit passes, every rank
// still running gets SIGTERM (or the signal received), and SIGKILL after
// the grace period; a second Ctrl-C kills at once. The job ends when every
// process has been reaped and its output drained.
//
// A JobController replaces the first rule: it hears of every exit, may
// start more processes and decides when the job stops (the elastic driver).
#pragma once

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "runner/launch_options.h"
#include "runner/process.h"
#include "runner/rank_layout.h"

namespace kolo::runner {

class OutputMux;

struct RankLaunch {
  RankSlot slot;
  int tag = 0;  // output lines are tagged "[tag]"; the rank, or an elastic worker's number
  bool remote = false;
  SpawnSpec spawn;             // local: the rank itself; remote: the ssh client
  std::string remote_request;  // remote: written to ssh's stdin first (remote_exec.h)
  // Local, under a rank supervisor (rank_supervisor.h): its stdin is a pipe
  // it closes once the program runs, which the launch waits for.
  bool supervised = false;
};

struct JobOptions {
  OutputOptions output;
  int stdout_fd = 1;
  int stderr_fd = 2;
  int signal_fd = -1;  // a SignalCapture's fd, or -1
  std::chrono::milliseconds kill_grace{5000};
  std::chrono::milliseconds job_timeout{0};  // 0 = none
  bool verbose = false;
};

struct JobResult {
  int exit_code = 0;    // 0; 1 when a rank failed or time ran out; 128+N after signal N
  std::string message;  // one line for the user, empty on success
  std::vector<std::optional<ExitStatus>> ranks;
  // The rank the message names, or -1: the first to fail, unless a rank
  // died of a signal nobody sent it while the others were failing with it
  // (a rank killed by hand or by the OOM killer makes its peers exit with
  // errors at nearly the same moment; the killed one is the cause).
  int first_failure = -1;
  bool timed_out = false;
  int interrupted_by = 0;  // signal number, or 0
};

// How a rank ended, in words, knowing how its process was reached: for a
// remote rank, ssh's 255 is a connection failure and 128+N the helper's
// report of signal N.
std::string describe_rank_end(const RankLaunch& rank, const ExitStatus& status);

class Job;

// Policy for a job whose processes may end without ending the job.
class JobController {
 public:
  using Clock = std::chrono::steady_clock;
  virtual ~JobController() = default;
  // A process ended; `job.status(index)` holds how.
  virtual void on_exit(Job& job, size_t index) = 0;
  // Called at every turn of the event loop (after exits and output); returns
  // when it wants the next call at the latest.
  virtual Clock::time_point on_tick(Job& job, Clock::time_point now) = 0;
};

class Job {
 public:
  // With a controller, exits go to it instead of stopping the job.
  Job(std::vector<RankLaunch> ranks, JobOptions options, JobController* controller = nullptr);
  ~Job();
  Job(const Job&) = delete;
  Job& operator=(const Job&) = delete;

  JobResult run();

  // For a controller, while run() runs.
  size_t start(RankLaunch launch);  // starts one more process; returns its index
  void signal(size_t index, int sig);
  bool running(size_t index) const;
  const std::optional<ExitStatus>& status(size_t index) const;
  const RankLaunch& launch(size_t index) const;
  size_t count() const;
  bool stopping() const { return stopping_; }
  // Ends the job: every process still running gets SIGTERM (SIGKILL after
  // the grace period); the result carries this exit code and message.
  void stop(int exit_code, std::string message);
  void note(const std::string& line);  // "kolorun: line" on the launcher's stderr

 private:
  struct Rank;
  using Clock = std::chrono::steady_clock;

  void start_one(size_t index);
  void on_exit(size_t index);
  // Waits (bounded) until rank `index`'s program runs or it has ended, and
  // handles its end: the launch stops at a rank that could not be started.
  void await_start(size_t index);
  void begin_stop(int sig);
  void escalate();
  void deliver(Rank& rank, int sig);
  void flush_control(Rank& rank);
  void read_output(Rank& rank, int which);
  bool all_reaped() const;
  bool output_open() const;
  void on_signal(int sig);
  void finish_result();

  std::vector<Rank> ranks_;
  JobOptions options_;
  JobController* controller_;
  std::optional<std::pair<int, std::string>> outcome_;  // set by stop()
  bool running_ = false;
  std::unique_ptr<OutputMux> mux_;
  JobResult result_;
  bool stopping_ = false;
  int first_exit_ = -1;                       // the first rank to fail, in time
  std::optional<Clock::time_point> kill_at_;  // SIGKILL everything still running then
  // Then kill the groups of remote ranks' ssh clients and of local rank
  // supervisors still there.
  std::optional<Clock::time_point> helper_kill_at_;
  std::optional<Clock::time_point> drain_until_;  // stop waiting for output then
};

}  // namespace kolo::runner
