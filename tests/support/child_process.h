// A child process for multi-process tests, started by the runner's
// ChildProcess (the one spawning implementation): the test's environment
// plus overrides, stdout and stderr captured to files, waited for with a
// deadline, and killed with its whole process group when the test ends, so
// no test leaves an orphan behind.
#pragma once

#include <signal.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "runner/process.h"

namespace kolo::testing {

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const std::string& output_prefix)
      : stdout_path_(output_prefix + ".out"),
        stderr_path_(output_prefix + ".err"),
        process_(spec(argv, env)) {}

  int pid() const { return process_.pid(); }
  bool running() { return process_.running(); }
  // To this process only (tests stop or kill one rank on purpose).
  void signal(int sig) { ::kill(process_.pid(), sig); }
  std::optional<runner::ExitStatus> wait_for(std::chrono::milliseconds limit) {
    return process_.wait_for(limit);
  }

  std::string stdout_text() const { return slurp(stdout_path_); }
  std::string stderr_text() const { return slurp(stderr_path_); }

 private:
  runner::SpawnSpec spec(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env) const {
    runner::SpawnSpec s;
    s.argv = argv;
    s.env = runner::current_environment();
    for (const auto& [k, v] : env) s.env[k] = v;
    s.out = runner::Stream::file(stdout_path_);
    s.err = runner::Stream::file(stderr_path_);
    return s;
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  std::string stdout_path_, stderr_path_;
  runner::ChildProcess process_;
};

}  // namespace kolo::testing
