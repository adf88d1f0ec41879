// ChildProcess: the one way Kolo starts a process (ranks, ssh clients, the
// remote helper's worker, test children). Each child gets its own process
// group, so stopping a rank also stops whatever it started, and dies with
// its parent (PR_SET_PDEATHSIG), so a launcher killed with SIGKILL leaves no
// rank behind. Exit is observed through a pidfd, which a poll() loop can
// wait on together with output pipes.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "common/unique_fd.h"

namespace kolo::runner {

using Environment = std::map<std::string, std::string>;

// This process's environment as a map.
Environment current_environment();

// `name` itself if it contains '/' and is an executable file, else the first
// executable match in `path_variable` (colon-separated). nullopt if none.
std::optional<std::string> find_program(const std::string& name, const std::string& path_variable);

// How a process ended.
struct ExitStatus {
  int code = 0;    // valid when signal == 0
  int signal = 0;  // non-zero when killed by a signal
  bool ok() const { return signal == 0 && code == 0; }
  std::string describe() const;  // "exited with code 3" / "was killed by signal 9 (Killed)"
  static ExitStatus from_wait_status(int status);
};

// Where a child's stdin, stdout or stderr goes.
struct Stream {
  enum class Kind { kInherit, kNull, kPipe, kFile } kind = Kind::kInherit;
  std::string path;  // kFile: created or truncated
  static Stream inherit() { return {}; }
  static Stream null() { return {Kind::kNull, ""}; }
  static Stream pipe() { return {Kind::kPipe, ""}; }
  static Stream file(std::string p) { return {Kind::kFile, std::move(p)}; }
};

struct SpawnSpec {
  std::vector<std::string> argv;  // argv[0] must be a path (see find_program)
  Environment env;                // the child's whole environment
  std::string cwd;                // empty: this process's
  Stream in = Stream::null();
  Stream out = Stream::inherit();
  Stream err = Stream::inherit();
};

class ChildProcess {
 public:
  // Throws IoError when the process cannot be created; a program that
  // cannot be executed is reported by the child on its stderr with exit
  // code 127 (126 for a bad working directory).
  explicit ChildProcess(const SpawnSpec& spec);
  ~ChildProcess();  // a child still running is killed (SIGKILL, whole group) and reaped
  ChildProcess(ChildProcess&&) noexcept;
  ChildProcess& operator=(ChildProcess&&) = delete;
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Readable (POLLIN) once the process has exited.
  int exit_fd() const { return pidfd_.get(); }
  // The parent's ends of Stream::pipe() streams; -1 otherwise. Owned here;
  // release_*() hands ownership to the caller.
  int stdin_fd() const { return stdin_.get(); }
  int stdout_fd() const { return stdout_.get(); }
  int stderr_fd() const { return stderr_.get(); }
  UniqueFd release_stdin() { return std::move(stdin_); }
  UniqueFd release_stdout() { return std::move(stdout_); }
  UniqueFd release_stderr() { return std::move(stderr_); }

  // Signals the child's whole process group, and continues it after a
  // signal a stopped process would leave pending (SIGTERM to a frozen rank).
  // Safe after exit (until reaped, the zombie keeps the group id from being
  // reused).
  void signal_group(int sig) const;

  // Reaps the child if it has exited: its status, else nullopt. After exit
  // the rest of its process group is killed, so nothing it started
  // outlives it.
  std::optional<ExitStatus> poll_exit();
  // Waits up to `limit`; nullopt if still running.
  std::optional<ExitStatus> wait_for(std::chrono::milliseconds limit);
  bool running() { return !poll_exit().has_value(); }
  const std::optional<ExitStatus>& exit_status() const { return status_; }

 private:
  pid_t pid_ = -1;
  UniqueFd pidfd_;
  UniqueFd stdin_, stdout_, stderr_;
  std::optional<ExitStatus> status_;
};

}  // namespace kolo::runner
