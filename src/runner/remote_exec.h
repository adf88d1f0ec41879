// Running a rank on another host. kolorun starts
//   ssh HOST exec /path/to/kolorun --internal-remote-exec
// and writes the rank's request (working directory, argv, environment with
// the job secret) to ssh's stdin, so no secret appears on any command line
// that `ps` shows on either host. The helper on the remote side starts the
// rank in its own process group and keeps reading its stdin as a control
// channel: "signal N" lines are forwarded to the rank's group, and end of
// input (kolorun or its ssh died, the connection broke) stops the rank:
// SIGTERM, then SIGKILL after the grace period. So no remote process
// outlives its launcher.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runner/process.h"

namespace kolo::runner {

inline constexpr const char* kRemoteHelperFlag = "--internal-remote-exec";

struct RemoteRequest {
  std::string cwd;
  std::vector<std::string> argv;
  Environment env;  // added to (and overriding) the remote login environment
  int grace_ms = 5000;
  bool operator==(const RemoteRequest&) const = default;
};

std::string encode_remote_request(const RemoteRequest& request);

// A complete request at the start of `bytes` and the number of bytes it
// took; nullopt while more bytes are needed. Throws InvalidArgument on
// malformed or oversized input.
std::optional<std::pair<RemoteRequest, size_t>> decode_remote_request(std::string_view bytes);

// The control line that asks the helper to send `sig` to the rank.
std::string signal_line(int sig);

// The remote side: reads the request from `in_fd`, runs the rank with
// stdout and stderr inherited, and returns the exit code for the helper
// (the rank's own, or 128 + signal number if it was killed by a signal).
int run_remote_helper(int in_fd);

}  // namespace kolo::runner
