#include "runner/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <thread>

#include "common/errno_text.h"
#include "common/error.h"

extern char** environ;

namespace kolo::runner {
namespace {

int pidfd_open(pid_t pid) {
  return static_cast<int>(::syscall(SYS_pidfd_open, pid, 0));
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  out.reserve(strings.size() + 1);
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

// Both ends close on exec; the child moves its end onto 0, 1 or 2.
struct Pipe {
  UniqueFd read, write;
  static Pipe make() {
    int fds[2];
    if (::pipe2(fds, O_CLOEXEC) != 0) throw IoError(fmt::format("pipe2: {}", errno_text(errno)));
    return {UniqueFd(fds[0]), UniqueFd(fds[1])};
  }
};

// What the child does with one standard stream, decided before fork so the
// child only makes async-signal-safe calls.
struct ChildStream {
  int target = -1;  // 0, 1 or 2
  Stream::Kind kind = Stream::Kind::kInherit;
  int pipe_end = -1;           // kPipe: the child's end
  const char* path = nullptr;  // kNull / kFile
};

void write_stderr(const char* a, const char* b, const char* c) {
  for (const char* s : {a, b, c}) {
    ssize_t ignored = ::write(STDERR_FILENO, s, ::strlen(s));
    (void)ignored;
  }
}

[[noreturn]] void exec_child(const std::vector<ChildStream>& streams, const char* cwd, char** argv,
                             char** envp, pid_t parent, const char* exec_failed_prefix) {
  ::setpgid(0, 0);
  ::prctl(PR_SET_PDEATHSIG, SIGKILL);
  if (::getppid() != parent) ::_exit(127);  // the parent died before prctl
  // The launcher blocks or ignores some signals for itself; a rank starts clean.
  for (int sig : {SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGCHLD}) ::signal(sig, SIG_DFL);
  sigset_t none;
  ::sigemptyset(&none);
  ::sigprocmask(SIG_SETMASK, &none, nullptr);
  for (const auto& s : streams) {
    int fd = -1;
    if (s.kind == Stream::Kind::kInherit) continue;
    if (s.kind == Stream::Kind::kPipe) fd = s.pipe_end;
    if (s.kind == Stream::Kind::kNull)
      fd = ::open("/dev/null", s.target == 0 ? O_RDONLY : O_WRONLY);
    if (s.kind == Stream::Kind::kFile) fd = ::open(s.path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd < 0) {
      write_stderr("kolo: cannot open ", s.path ? s.path : "a pipe", " for a child process\n");
      ::_exit(126);
    }
    if (fd == s.target) {
      ::fcntl(fd, F_SETFD, 0);  // dup2 onto itself would leave close-on-exec set
    } else {
      ::dup2(fd, s.target);
    }
  }
  // Nothing of the parent's (listening sockets, other ranks' pipes) leaks in.
  ::syscall(SYS_close_range, 3, UINT_MAX, 0);
  if (cwd != nullptr && ::chdir(cwd) != 0) {
    write_stderr("kolo: cannot enter working directory ", cwd, "\n");
    ::_exit(126);
  }
  ::execve(argv[0], argv, envp);
  write_stderr(exec_failed_prefix, ::strerror(errno), "\n");
  ::_exit(127);
}

}  // namespace

Environment current_environment() {
  Environment vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  return vars;
}

namespace {

bool executable_file(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
         ::access(path.c_str(), X_OK) == 0;
}

}  // namespace

std::optional<std::string> find_program(const std::string& name, const std::string& path_variable) {
  if (name.empty()) return std::nullopt;
  // A path is not looked up, but it must still lead to a program: else the
  // exec fails in every rank, a failed job instead of a wrong command line.
  if (name.find('/') != std::string::npos)
    return executable_file(name) ? std::optional<std::string>(name) : std::nullopt;
  size_t start = 0;
  while (start <= path_variable.size()) {
    size_t end = path_variable.find(':', start);
    if (end == std::string::npos) end = path_variable.size();
    std::string dir = path_variable.substr(start, end - start);
    std::string candidate = (dir.empty() ? std::string(".") : dir) + "/" + name;
    if (executable_file(candidate)) return candidate;
    start = end + 1;
  }
  return std::nullopt;
}

std::string ExitStatus::describe() const {
  if (signal != 0) {
    const char* abbrev = ::sigabbrev_np(signal);
    return fmt::format("was killed by signal {} (SIG{})", signal, abbrev ? abbrev : "?");
  }
  return fmt::format("exited with code {}", code);
}

ExitStatus ExitStatus::from_wait_status(int status) {
  ExitStatus s;
  if (WIFEXITED(status)) s.code = WEXITSTATUS(status);
  if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
  return s;
}

ChildProcess::ChildProcess(const SpawnSpec& spec) {
  if (spec.argv.empty()) throw InvalidArgument("no program to start");
  std::vector<std::string> argv = spec.argv;
  std::vector<std::string> envp;
  envp.reserve(spec.env.size());
  for (const auto& [k, v] : spec.env) envp.push_back(k + "=" + v);
  auto c_argv = c_strings(argv);
  auto c_envp = c_strings(envp);
  const std::string exec_failed = fmt::format("kolo: cannot execute '{}': ", spec.argv[0]);

  std::vector<Pipe> pipes;  // kept open until after fork
  pipes.reserve(3);
  std::vector<ChildStream> streams;
  const Stream* specs[3] = {&spec.in, &spec.out, &spec.err};
  UniqueFd* parent_ends[3] = {&stdin_, &stdout_, &stderr_};
  for (int target = 0; target < 3; ++target) {
    const Stream& s = *specs[target];
    ChildStream cs{target, s.kind, -1, nullptr};
    if (s.kind == Stream::Kind::kNull) cs.path = "/dev/null";
    if (s.kind == Stream::Kind::kFile) cs.path = s.path.c_str();
    if (s.kind == Stream::Kind::kPipe) {
      pipes.push_back(Pipe::make());
      Pipe& p = pipes.back();
      cs.pipe_end = target == 0 ? p.read.get() : p.write.get();
      *parent_ends[target] = target == 0 ? std::move(p.write) : std::move(p.read);
    }
    streams.push_back(cs);
  }

  const pid_t parent = ::getpid();
  pid_ = ::fork();
  if (pid_ < 0) throw IoError(fmt::format("fork: {}", errno_text(errno)));
  if (pid_ == 0)
    exec_child(streams, spec.cwd.empty() ? nullptr : spec.cwd.c_str(), c_argv.data(), c_envp.data(),
               parent, exec_failed.c_str());
  // Also from the parent, so the group exists before anyone signals it.
  ::setpgid(pid_, pid_);
  pidfd_ = UniqueFd(pidfd_open(pid_));
  if (!pidfd_.valid()) {
    int err = errno;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
    pid_ = -1;
    throw IoError(fmt::format("pidfd_open: {}", errno_text(err)));
  }
}

ChildProcess::ChildProcess(ChildProcess&& other) noexcept
    : pid_(std::exchange(other.pid_, -1)),
      pidfd_(std::move(other.pidfd_)),
      stdin_(std::move(other.stdin_)),
      stdout_(std::move(other.stdout_)),
      stderr_(std::move(other.stderr_)),
      status_(other.status_) {}

ChildProcess::~ChildProcess() {
  if (pid_ <= 0 || status_) return;
  signal_group(SIGKILL);
  if (!wait_for(std::chrono::seconds(10))) {
    // Unkillable (uninterruptible sleep): leave it to init rather than hang.
  }
}

namespace {

// Whether continuing a stopped process after `sig` lets it act on it. A
// stopped process (SIGSTOP: a frozen rank) acts on no signal but SIGKILL
// until continued, so kolorun's SIGTERM would sit pending through the whole
// grace period; continued, it ends at once or runs its handler.
bool acted_on_only_when_running(int sig) {
  return sig != 0 && sig != SIGKILL && sig != SIGCONT && sig != SIGSTOP && sig != SIGTSTP &&
         sig != SIGTTIN && sig != SIGTTOU;
}

}  // namespace

void ChildProcess::signal_group(int sig) const {
  if (pid_ <= 0 || status_) return;
  const bool group = ::kill(-pid_, sig) == 0;
  if (!group) ::kill(pid_, sig);
  if (acted_on_only_when_running(sig)) ::kill(group ? -pid_ : pid_, SIGCONT);
}

std::optional<ExitStatus> ChildProcess::poll_exit() {
  if (status_ || pid_ <= 0) return status_;
  siginfo_t info{};
  // WNOWAIT: look without reaping, so the group id stays ours while the
  // group's remaining members are killed.
  if (::waitid(P_PID, static_cast<id_t>(pid_), &info, WEXITED | WNOHANG | WNOWAIT) != 0 ||
      info.si_pid != pid_)
    return std::nullopt;
  ::kill(-pid_, SIGKILL);
  int status = 0;
  if (::waitpid(pid_, &status, 0) != pid_) return std::nullopt;
  status_ = ExitStatus::from_wait_status(status);
  return status_;
}

std::optional<ExitStatus> ChildProcess::wait_for(std::chrono::milliseconds limit) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!poll_exit()) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        deadline - std::chrono::steady_clock::now());
    if (left.count() <= 0) return std::nullopt;
    pollfd p{pidfd_.get(), POLLIN, 0};
    ::poll(&p, 1, static_cast<int>(std::min<int64_t>(left.count(), 1000)));
  }
  return status_;
}

}  // namespace kolo::runner
