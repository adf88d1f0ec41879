#include "runner/rank_supervisor.h"

#include <dirent.h>
#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <fstream>
#include <sstream>
#include <thread>

#include "common/errno_text.h"

extern char** environ;

namespace kolo::runner {
namespace {

using Clock = std::chrono::steady_clock;

// The signal the kernel sends the supervisor when kolorun dies. Real-time,
// so it is never one kolorun passes on to a rank's group.
int parent_death_signal() {
  return SIGRTMIN + 1;
}

// The children of `pid`, from every thread's children list.
std::vector<pid_t> children_of(pid_t pid) {
  std::vector<pid_t> out;
  const std::string tasks = fmt::format("/proc/{}/task", pid);
  DIR* dir = ::opendir(tasks.c_str());
  if (dir == nullptr) return out;
  while (dirent* entry = ::readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::ifstream in(tasks + "/" + entry->d_name + "/children");
    pid_t child = 0;
    while (in >> child) out.push_back(child);
  }
  ::closedir(dir);
  return out;
}

std::vector<pid_t> descendants_of(pid_t pid) {
  std::vector<pid_t> found = children_of(pid);
  for (size_t i = 0; i < found.size(); ++i)
    for (pid_t grandchild : children_of(found[i])) found.push_back(grandchild);
  return found;
}

void reap_all() {
  while (::waitpid(-1, nullptr, WNOHANG) > 0) {
  }
}

[[noreturn]] void exit_like(int status) {
  if (WIFEXITED(status)) ::_exit(WEXITSTATUS(status));
  const int sig = WTERMSIG(status);
  // The same death as the rank's, without a core file of the supervisor.
  rlimit no_core{0, 0};
  ::setrlimit(RLIMIT_CORE, &no_core);
  ::signal(sig, SIG_DFL);
  sigset_t only;
  ::sigemptyset(&only);
  ::sigaddset(&only, sig);
  ::sigprocmask(SIG_UNBLOCK, &only, nullptr);
  ::raise(sig);
  ::_exit(128 + sig);  // a signal that does not end a process
}

}  // namespace

int supervisor_kill_signal() {
  return SIGRTMIN + 2;
}

void kill_descendants(std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  while (true) {
    const std::vector<pid_t> all = descendants_of(::getpid());
    if (all.empty()) break;
    for (pid_t pid : all) ::kill(pid, SIGKILL);
    reap_all();
    if (Clock::now() >= deadline) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  reap_all();
}

int run_rank_supervisor(const std::vector<std::string>& command) {
  if (command.empty()) {
    fmt::print(stderr, "kolorun: {} needs a program\n", kRankSupervisorFlag);
    return 125;
  }
  // Signals kolorun passes to the group are for the program; the supervisor
  // only waits. SIGCHLD and the parent's death are read from a signalfd.
  sigset_t blocked, previous;
  ::sigemptyset(&blocked);
  for (int sig : {SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGPIPE, SIGALRM})
    ::sigaddset(&blocked, sig);
  ::sigaddset(&blocked, parent_death_signal());
  ::sigaddset(&blocked, supervisor_kill_signal());
  ::sigprocmask(SIG_BLOCK, &blocked, &previous);
  sigset_t watched;
  ::sigemptyset(&watched);
  ::sigaddset(&watched, SIGCHLD);
  ::sigaddset(&watched, parent_death_signal());
  ::sigaddset(&watched, supervisor_kill_signal());
  const int events = ::signalfd(-1, &watched, SFD_CLOEXEC);
  if (events < 0 || ::prctl(PR_SET_CHILD_SUBREAPER, 1) != 0) {
    fmt::print(stderr, "kolorun: rank supervisor: {}\n", errno_text(errno));
    return 125;
  }
  // kolorun started this process with SIGKILL as its parent-death signal,
  // so it cannot have died unnoticed before this line replaces it.
  ::prctl(PR_SET_PDEATHSIG, parent_death_signal());

  std::vector<std::string> args = command;
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // Closed by a successful exec; a failed one writes its errno first.
  int exec_status[2];
  if (::pipe2(exec_status, O_CLOEXEC) != 0) {
    fmt::print(stderr, "kolorun: cannot start {}: pipe: {}\n", command[0], errno_text(errno));
    return 127;
  }
  const pid_t rank = ::fork();
  if (rank < 0) {
    fmt::print(stderr, "kolorun: cannot start {}: fork: {}\n", command[0], errno_text(errno));
    return 127;
  }
  if (rank == 0) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    ::close(events);
    ::close(exec_status[0]);
    // The program reads nothing, as ranks never did; stdin is kolorun's.
    const int null = ::open("/dev/null", O_RDONLY);
    if (null >= 0 && null != STDIN_FILENO) {
      ::dup2(null, STDIN_FILENO);
      ::close(null);
    }
    ::sigprocmask(SIG_SETMASK, &previous, nullptr);
    ::execve(argv[0], argv.data(), environ);
    const int error = errno;
    ssize_t ignored = ::write(exec_status[1], &error, sizeof error);
    (void)ignored;
    ::_exit(127);
  }
  ::close(exec_status[1]);
  int exec_error = 0;
  ssize_t got = 0;
  do {
    got = ::read(exec_status[0], &exec_error, sizeof exec_error);
  } while (got < 0 && errno == EINTR);
  ::close(exec_status[0]);
  if (got == static_cast<ssize_t>(sizeof exec_error))
    fmt::print(stderr, "kolorun: cannot run {}: {}\n", command[0], errno_text(exec_error));
  // Tells kolorun the rank's program runs (or has failed, which its exit
  // status says): it goes on with the next rank.
  ::close(STDIN_FILENO);

  while (true) {
    signalfd_siginfo info{};
    const ssize_t n = ::read(events, &info, sizeof info);
    if (n != static_cast<ssize_t>(sizeof info)) {
      if (n < 0 && errno == EINTR) continue;
      kill_descendants();
      return 125;
    }
    if (static_cast<int>(info.ssi_signo) == parent_death_signal()) {
      // kolorun is gone: nothing of this rank may outlive it.
      kill_descendants();
      return 137;
    }
    if (static_cast<int>(info.ssi_signo) == supervisor_kill_signal()) {
      // kolorun's SIGKILL, given to the whole tree.
      kill_descendants();
      ::raise(SIGKILL);
    }
    int status = 0;
    pid_t pid = 0;
    while ((pid = ::waitpid(-1, &status, WNOHANG)) > 0) {
      if (pid != rank) continue;  // an orphan adopted from the rank's tree
      kill_descendants();
      exit_like(status);
    }
  }
}

}  // namespace kolo::runner
