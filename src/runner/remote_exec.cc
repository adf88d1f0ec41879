#include "runner/remote_exec.h"

#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cstring>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/machine.h"
#include "runner/rank_supervisor.h"

namespace kolo::runner {
namespace {

constexpr std::string_view kMagic = "KOLO-REMOTE-EXEC 1\n";
constexpr size_t kMaxRequestBytes = 8u << 20;
constexpr size_t kMaxFieldBytes = 4u << 20;
constexpr size_t kMaxArgs = 65536;
using SteadyClock = std::chrono::steady_clock;

void append_field(std::string& out, std::string_view tag, std::string_view value) {
  out += fmt::format("{} {}\n", tag, value.size());
  out.append(value);
  out += '\n';
}

// Reads "<tag> <len>\n<bytes>\n" at `pos`: false if more input is needed.
bool read_field(std::string_view in, size_t& pos, std::string& tag, std::string& value) {
  size_t eol = in.find('\n', pos);
  if (eol == std::string_view::npos) {
    if (in.size() - pos > 64) throw InvalidArgument("remote request: field header too long");
    return false;
  }
  std::string_view header = in.substr(pos, eol - pos);
  if (header == "go") {
    tag = "go";
    pos = eol + 1;
    return true;
  }
  size_t space = header.find(' ');
  if (space == std::string_view::npos)
    throw InvalidArgument(fmt::format("remote request: bad field header '{}'", header));
  size_t length = 0;
  std::string_view digits = header.substr(space + 1);
  auto [end, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), length);
  if (ec != std::errc() || end != digits.data() + digits.size() || length > kMaxFieldBytes)
    throw InvalidArgument(fmt::format("remote request: bad field length in '{}'", header));
  if (in.size() < eol + 1 + length + 1) return false;
  if (in[eol + 1 + length] != '\n') throw InvalidArgument("remote request: field not terminated");
  tag = std::string(header.substr(0, space));
  value = std::string(in.substr(eol + 1, length));
  pos = eol + 1 + length + 1;
  return true;
}

RemoteRequest read_request(int in_fd, std::string& buffer, std::chrono::milliseconds limit) {
  const auto deadline = SteadyClock::now() + limit;
  while (true) {
    if (auto decoded = decode_remote_request(buffer)) {
      buffer.erase(0, decoded->second);
      return std::move(decoded->first);
    }
    auto left =
        std::chrono::duration_cast<std::chrono::milliseconds>(deadline - SteadyClock::now());
    if (left.count() <= 0)
      throw TimeoutError("no complete request from kolorun within the time limit");
    pollfd p{in_fd, POLLIN, 0};
    if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;
    char chunk[65536];
    ssize_t n = ::read(in_fd, chunk, sizeof chunk);
    if (n == 0) throw IoError("kolorun closed the connection before sending the request");
    if (n < 0 && errno != EINTR)
      throw IoError(fmt::format("reading the request: {}", errno_text(errno)));
    if (n > 0) buffer.append(chunk, static_cast<size_t>(n));
  }
}

// Forwards "signal N" lines to the rank; false once input has ended.
bool handle_control(int in_fd, std::string& buffer, ChildProcess& rank) {
  char chunk[4096];
  ssize_t n = ::read(in_fd, chunk, sizeof chunk);
  if (n == 0 || (n < 0 && errno != EINTR && errno != EAGAIN)) return false;
  if (n > 0) buffer.append(chunk, static_cast<size_t>(n));
  size_t eol;
  while ((eol = buffer.find('\n')) != std::string::npos) {
    std::string line = buffer.substr(0, eol);
    buffer.erase(0, eol + 1);
    int sig = 0;
    if (line.rfind("signal ", 0) == 0) sig = std::atoi(line.c_str() + 7);
    if (sig > 0 && sig < NSIG) rank.signal_group(sig);
  }
  if (buffer.size() > 4096) buffer.clear();  // not our protocol; ignore it
  return true;
}

}  // namespace

std::string encode_remote_request(const RemoteRequest& request) {
  std::string out(kMagic);
  append_field(out, "cwd", request.cwd);
  append_field(out, "grace", std::to_string(request.grace_ms));
  for (const auto& a : request.argv) append_field(out, "arg", a);
  for (const auto& [k, v] : request.env) append_field(out, "env", k + "=" + v);
  out += "go\n";
  return out;
}

std::optional<std::pair<RemoteRequest, size_t>> decode_remote_request(std::string_view bytes) {
  if (bytes.size() < kMagic.size()) {
    if (kMagic.substr(0, bytes.size()) != bytes)
      throw InvalidArgument("remote request: not a kolorun request");
    return std::nullopt;
  }
  if (bytes.substr(0, kMagic.size()) != kMagic)
    throw InvalidArgument("remote request: not a kolorun request");
  RemoteRequest request;
  size_t pos = kMagic.size();
  std::string tag, value;
  while (read_field(bytes, pos, tag, value)) {
    if (tag == "go") {
      if (request.argv.empty()) throw InvalidArgument("remote request: no program");
      return std::make_pair(std::move(request), pos);
    }
    if (tag == "cwd") {
      request.cwd = value;
    } else if (tag == "grace") {
      request.grace_ms = std::clamp(std::atoi(value.c_str()), 0, 600000);
    } else if (tag == "arg") {
      if (request.argv.size() >= kMaxArgs)
        throw InvalidArgument("remote request: too many arguments");
      request.argv.push_back(value);
    } else if (tag == "env") {
      size_t eq = value.find('=');
      if (eq == std::string::npos || eq == 0)
        throw InvalidArgument("remote request: bad environment entry");
      request.env[value.substr(0, eq)] = value.substr(eq + 1);
    } else {
      throw InvalidArgument(fmt::format("remote request: unknown field '{}'", tag));
    }
  }
  if (bytes.size() > kMaxRequestBytes) throw InvalidArgument("remote request: too large");
  return std::nullopt;
}

std::string signal_line(int sig) {
  return fmt::format("signal {}\n", sig);
}

int run_remote_helper(int in_fd) {
  const std::string host = local_hostname();
  std::string buffer;
  RemoteRequest request;
  try {
    request = read_request(in_fd, buffer, std::chrono::seconds(60));
  } catch (const Error& e) {
    fmt::print(stderr, "kolorun (remote helper on {}): {}\n", host, e.what());
    return 125;
  }
  Environment env = current_environment();
  for (const auto& [k, v] : request.env) env[k] = v;
  auto program = find_program(request.argv[0], env.count("PATH") ? env["PATH"] : "/usr/bin:/bin");
  if (!program) {
    fmt::print(stderr, "kolorun: {}: command not found on host {}\n", request.argv[0], host);
    return 127;
  }
  SpawnSpec spec;
  spec.argv = request.argv;
  spec.argv[0] = *program;
  spec.env = std::move(env);
  spec.cwd = request.cwd;
  spec.in = Stream::null();
  // As the local rank supervisor (rank_supervisor.h): processes the rank
  // starts that leave its group come back to this helper when orphaned, and
  // are ended with the rank.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  ChildProcess rank(spec);

  bool input_open = true;
  std::optional<SteadyClock::time_point> kill_at;
  while (true) {
    if (auto status = rank.poll_exit()) {
      kill_descendants();
      return status->signal != 0 ? 128 + status->signal : status->code;
    }
    pollfd fds[2] = {{rank.exit_fd(), POLLIN, 0}, {input_open ? in_fd : -1, POLLIN, 0}};
    int timeout = -1;
    if (kill_at) {
      auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(*kill_at - SteadyClock::now())
              .count();
      timeout = static_cast<int>(std::max<int64_t>(left, 0));
    }
    ::poll(fds, 2, timeout);
    if (input_open && fds[1].revents != 0 && !handle_control(in_fd, buffer, rank)) {
      // kolorun is gone: stop the rank as it would have.
      input_open = false;
      rank.signal_group(SIGTERM);
      kill_at = SteadyClock::now() + std::chrono::milliseconds(request.grace_ms);
    }
    if (kill_at && SteadyClock::now() >= *kill_at) {
      rank.signal_group(SIGKILL);
      kill_at.reset();
    }
  }
}

}  // namespace kolo::runner
