// A child process for multi-process tests: started with a given environment,
// its stdout and stderr captured to files, waited for with a deadline, and
// killed (SIGKILL) on destruction if still running, so no test leaves an
// orphan behind.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace kolo::testing {

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const std::string& output_prefix)
      : stdout_path_(output_prefix + ".out"), stderr_path_(output_prefix + ".err") {
    std::map<std::string, std::string> vars;
    for (char** e = environ; *e; ++e) {
      std::string s(*e);
      auto eq = s.find('=');
      if (eq != std::string::npos) vars[s.substr(0, eq)] = s.substr(eq + 1);
    }
    for (const auto& [k, v] : env) vars[k] = v;
    std::vector<std::string> env_strings;
    for (const auto& [k, v] : vars) env_strings.push_back(k + "=" + v);
    std::vector<char*> c_argv, c_env;
    std::vector<std::string> argv_copy = argv;
    for (auto& a : argv_copy) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    for (auto& e : env_strings) c_env.push_back(e.data());
    c_env.push_back(nullptr);
    pid_ = ::fork();
    if (pid_ == 0) {
      if (!std::freopen(stdout_path_.c_str(), "w", stdout) || !std::freopen(stderr_path_.c_str(), "w", stderr))
        ::_exit(126);
      ::execve(c_argv[0], c_argv.data(), c_env.data());
      ::_exit(127);
    }
  }
  ~ChildProcess() {
    if (running()) {
      ::kill(pid_, SIGKILL);
      wait_for(std::chrono::seconds(5));
    }
  }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  int pid() const { return pid_; }
  bool running() { return pid_ > 0 && !status_ && !poll(); }
  void signal(int sig) { ::kill(pid_, sig); }

  // The wait status, or nullopt if still running after `limit`.
  std::optional<int> wait_for(std::chrono::milliseconds limit) {
    auto deadline = std::chrono::steady_clock::now() + limit;
    while (!status_) {
      if (poll()) break;
      if (std::chrono::steady_clock::now() > deadline) return std::nullopt;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return status_;
  }

  std::string stdout_text() const { return slurp(stdout_path_); }
  std::string stderr_text() const { return slurp(stderr_path_); }

 private:
  bool poll() {
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) == pid_) {
      status_ = status;
      return true;
    }
    return false;
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  int pid_ = -1;
  std::optional<int> status_;
  std::string stdout_path_, stderr_path_;
};

}  // namespace kolo::testing
