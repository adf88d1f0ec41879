// A child process for multi-process tests, started by the runner's
// ChildProcess (the one spawning implementation): the test's environment
// plus overrides, stdout and stderr captured to files, waited for with a
// deadline, and killed with its whole process group when the test ends, so
// no test leaves an orphan behind. The output files go with it: a failing
// test prints what it needs from them, and every run of the suites would
// otherwise leave a few thousand files in the temp directory.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "runner/process.h"

namespace kolo::testing {

class ChildProcess {
 public:
  ChildProcess(const std::vector<std::string>& argv, const std::map<std::string, std::string>& env,
               const std::string& output_prefix)
      : files_{output_prefix + ".out", output_prefix + ".err"}, process_(spec(argv, env)) {}

  int pid() const { return process_.pid(); }
  bool running() { return process_.running(); }
  // To this process only (tests stop or kill one rank on purpose).
  void signal(int sig) { ::kill(process_.pid(), sig); }
  std::optional<runner::ExitStatus> wait_for(std::chrono::milliseconds limit) {
    return process_.wait_for(limit);
  }

  std::string stdout_text() const { return slurp(files_.out); }
  std::string stderr_text() const { return slurp(files_.err); }

 private:
  runner::SpawnSpec spec(const std::vector<std::string>& argv,
                         const std::map<std::string, std::string>& env) const {
    runner::SpawnSpec s;
    s.argv = argv;
    s.env = runner::current_environment();
    for (const auto& [k, v] : env) s.env[k] = v;
    s.out = runner::Stream::file(files_.out);
    s.err = runner::Stream::file(files_.err);
    return s;
  }
  static std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }

  // Removed when the ChildProcess goes: declared before process_, so only
  // after the process has been killed and reaped.
  struct OutputFiles {
    OutputFiles(std::string out_path, std::string err_path)
        : out(std::move(out_path)), err(std::move(err_path)) {}
    OutputFiles(const OutputFiles&) = delete;
    OutputFiles& operator=(const OutputFiles&) = delete;
    ~OutputFiles() {
      ::unlink(out.c_str());
      ::unlink(err.c_str());
    }
    std::string out, err;
  };

  OutputFiles files_;
  runner::ChildProcess process_;
};

}  // namespace kolo::testing
