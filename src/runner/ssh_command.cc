#include "runner/ssh_command.h"

#include <fmt/format.h>

#include "runner/remote_exec.h"

namespace kolo::runner {

std::string shell_quote(const std::string& text) {
  std::string out = "'";
  for (char c : text) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

std::vector<std::string> ssh_command(const std::string& ssh_program, const SshOptions& options,
                                     const std::string& host, const std::string& helper_path) {
  std::vector<std::string> argv{ssh_program};
  for (const auto& o : options.options) {
    argv.push_back("-o");
    argv.push_back(o);
  }
  // -T: no terminal, so stdout and stderr stay separate and binary-safe.
  // BatchMode: fail at once instead of prompting for a password.
  // ServerAlive*: a broken connection ends ssh (and so the rank) in seconds.
  argv.insert(argv.end(), {"-T", "-x", "-o", "BatchMode=yes", "-o", "LogLevel=ERROR", "-o",
                           fmt::format("ConnectTimeout={}", options.connect_timeout.count()), "-o",
                           "ServerAliveInterval=5", "-o", "ServerAliveCountMax=3", "-o",
                           "StrictHostKeyChecking=" + options.host_key_checking});
  if (!options.known_hosts_file.empty()) {
    argv.push_back("-o");
    argv.push_back("UserKnownHostsFile=" + options.known_hosts_file);
  }
  if (options.port) {
    argv.push_back("-p");
    argv.push_back(std::to_string(*options.port));
  }
  if (!options.identity_file.empty()) {
    argv.push_back("-i");
    argv.push_back(options.identity_file);
  }
  // "--" ends ssh's options; the host list forbids names starting with '-'.
  argv.push_back("--");
  argv.push_back(host);
  argv.push_back("exec " + shell_quote(helper_path) + " " + kRemoteHelperFlag);
  return argv;
}

}  // namespace kolo::runner
