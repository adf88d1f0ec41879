#include "runner/local_launcher.h"

#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include <fmt/format.h>

#include "common/error.h"
#include "rendezvous/store_auth.h"
#include "rendezvous/tcp_store_server.h"

extern char** environ;

namespace kolo::runner {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> rank_environment(const LocalLaunchOptions& options, int rank, int port,
                                          const std::string& secret) {
  std::map<std::string, std::string> vars;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string entry(*e);
    auto eq = entry.find('=');
    if (eq != std::string::npos) vars[entry.substr(0, eq)] = entry.substr(eq + 1);
  }
  char hostname[256] = {};
  ::gethostname(hostname, sizeof hostname - 1);
  const std::string r = std::to_string(rank), n = std::to_string(options.np);
  // Horovod's names too: user scripts read them.
  for (const char* prefix : {"KOLO_", "HOROVOD_"}) {
    std::string p(prefix);
    vars[p + "RANK"] = r;
    vars[p + "SIZE"] = n;
    vars[p + "LOCAL_RANK"] = r;
    vars[p + "LOCAL_SIZE"] = n;
    vars[p + "CROSS_RANK"] = "0";
    vars[p + "CROSS_SIZE"] = "1";
    vars[p + "HOSTNAME"] = hostname;
  }
  vars["KOLO_RENDEZVOUS_ADDR"] = "127.0.0.1";
  vars["KOLO_RENDEZVOUS_PORT"] = std::to_string(port);
  vars["KOLO_SECRET"] = secret;
  for (const auto& [k, v] : options.extra_env) vars[k] = v;
  std::vector<std::string> out;
  out.reserve(vars.size());
  for (const auto& [k, v] : vars) out.push_back(k + "=" + v);
  return out;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> out;
  for (auto& s : strings) out.push_back(s.data());
  out.push_back(nullptr);
  return out;
}

int spawn(std::vector<std::string> argv, std::vector<std::string> envp) {
  auto c_argv = c_strings(argv);
  auto c_envp = c_strings(envp);
  pid_t parent = ::getpid();
  pid_t pid = ::fork();
  if (pid < 0) throw IoError(std::string("fork failed: ") + std::strerror(errno));
  if (pid == 0) {
    // A rank must not outlive its launcher, even when the launcher is killed.
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(127);
    ::execvpe(c_argv[0], c_argv.data(), c_envp.data());
    std::string msg = fmt::format("kolo: cannot execute '{}': {}\n", argv[0], std::strerror(errno));
    ssize_t ignored = ::write(STDERR_FILENO, msg.data(), msg.size());
    (void)ignored;
    ::_exit(127);
  }
  return pid;
}

}  // namespace

std::string RankExit::describe() const {
  if (signal != 0)
    return fmt::format("rank {} (pid {}) was killed by signal {} ({})", rank, pid, signal,
                       ::strsignal(signal));
  return fmt::format("rank {} (pid {}) exited with code {}", rank, pid, exit_code);
}

int LaunchResult::exit_code() const { return (first_failure < 0 && !timed_out) ? 0 : 1; }

LaunchResult launch_local(const LocalLaunchOptions& options) {
  if (options.np < 1) throw InvalidArgument(fmt::format("-np must be at least 1, not {}", options.np));
  if (options.argv.empty()) throw InvalidArgument("no command to launch");

  std::string secret = rendezvous::generate_secret();
  rendezvous::TcpStoreServerOptions server_options;
  server_options.bind_address = "127.0.0.1";
  server_options.secret = secret;
  rendezvous::TcpStoreServer server(server_options);

  LaunchResult result;
  result.ranks.resize(options.np);
  std::map<int, int> pid_to_rank;
  for (int rank = 0; rank < options.np; ++rank) {
    int pid = spawn(options.argv, rank_environment(options, rank, server.port(), secret));
    result.ranks[rank] = RankExit{rank, pid, 0, 0};
    pid_to_rank[pid] = rank;
  }

  const auto start = Clock::now();
  std::optional<Clock::time_point> kill_at;  // set once we start stopping ranks
  size_t running = pid_to_rank.size();
  auto signal_running = [&](int sig) {
    for (const auto& [pid, rank] : pid_to_rank) ::kill(pid, sig);
  };
  while (running > 0) {
    int status = 0;
    pid_t pid = ::waitpid(-1, &status, WNOHANG);
    if (pid > 0 && pid_to_rank.count(pid)) {
      RankExit& r = result.ranks[pid_to_rank[pid]];
      if (WIFEXITED(status)) r.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
      pid_to_rank.erase(pid);
      --running;
      if (!r.ok() && result.first_failure < 0) {
        result.first_failure = r.rank;
        signal_running(SIGTERM);
        kill_at = Clock::now() + options.kill_grace;
      }
      continue;
    }
    auto now = Clock::now();
    if (options.job_timeout.count() > 0 && !kill_at && now - start > options.job_timeout) {
      result.timed_out = true;
      signal_running(SIGTERM);
      kill_at = now + options.kill_grace;
    }
    if (kill_at && now > *kill_at) signal_running(SIGKILL);
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return result;
}

}  // namespace kolo::runner
