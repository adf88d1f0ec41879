// The ssh command line for one remote rank. It carries no secret and no
// environment: those travel on ssh's stdin (remote_exec.h).
#pragma once

#include <string>
#include <vector>

#include "runner/launch_options.h"

namespace kolo::runner {

// ssh [user -o options] -T -x -o BatchMode=yes ... [-p P] [-i KEY] HOST exec 'HELPER'
// --internal-remote-exec User options come first because ssh keeps the first value it sees.
std::vector<std::string> ssh_command(const std::string& ssh_program, const SshOptions& options,
                                     const std::string& host, const std::string& helper_path);

// `text` as one word for a POSIX shell: 'text' with embedded quotes escaped.
std::string shell_quote(const std::string& text);

}  // namespace kolo::runner
