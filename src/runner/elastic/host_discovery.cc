#include "runner/elastic/host_discovery.h"

#include <fmt/format.h>
#include <poll.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <charconv>
#include <map>
#include <utility>

#include "common/errno_text.h"
#include "common/error.h"
#include "common/untrusted_text.h"
#include "runner/process.h"

namespace kolo::runner::elastic {
namespace {

using Clock = std::chrono::steady_clock;
namespace net = rendezvous::net;

constexpr int kMaxSlots = 4096;                 // as for -H and hostfiles (hosts.cc)
constexpr size_t kMaxStdout = size_t{1} << 20;  // a host list is never this long
constexpr size_t kStderrKept = size_t{64} << 10;
constexpr size_t kQuoteLimit = 80;  // of a bad line, in an error message
constexpr size_t kStderrLineLimit = 200;

bool is_space(char c) {
  return std::isspace(static_cast<unsigned char>(c)) != 0;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && is_space(s.front())) s.remove_prefix(1);
  while (!s.empty() && is_space(s.back())) s.remove_suffix(1);
  return s;
}

// The same characters hosts.cc accepts: the name ends up on an ssh command
// line, so quotes, semicolons and the like are refused, not passed on.
bool is_host_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_' ||
         c == '@' || c == '[' || c == ']' || c == ':' || c == '%';
}

class LineParser {
 public:
  LineParser(std::string_view line, int number) : line_(line), number_(number) {}

  HostSlots parse(int default_slots) const {
    std::string_view host = line_;
    std::optional<std::string_view> slots;
    if (size_t open = line_.find('['); open != std::string_view::npos) {
      size_t close = line_.find(']', open);
      if (close == std::string_view::npos) fail("'[' without a closing ']'");
      host = line_.substr(0, close + 1);
      std::string_view rest = line_.substr(close + 1);
      if (!rest.empty()) {
        if (rest.front() != ':') fail("expected ':slots' after ']'");
        slots = rest.substr(1);
      }
      if (close == open + 1) fail("empty host name");
    } else if (size_t colon = line_.find(':'); colon != std::string_view::npos) {
      if (line_.find(':', colon + 1) != std::string_view::npos)
        fail("more than one ':' (write IPv6 addresses as [addr] or [addr]:slots)");
      host = line_.substr(0, colon);
      slots = line_.substr(colon + 1);
    }
    check_host(host);
    return HostSlots{std::string(host), slots ? parse_slots(*slots) : default_slots};
  }

  [[noreturn]] void fail(std::string_view problem) const {
    throw InvalidArgument(
        fmt::format("line {} '{}': {}", number_, untrusted_text(line_, kQuoteLimit), problem));
  }

 private:
  void check_host(std::string_view host) const {
    if (host.empty()) fail("empty host name");
    for (char c : host)
      if (is_space(c)) fail("whitespace inside the host name");
    bool valid = host.front() != '-' && host.size() <= 255;
    for (char c : host) valid = valid && is_host_char(c);
    if (!valid) fail(fmt::format("'{}' is not a host name", untrusted_text(host, kQuoteLimit)));
  }

  int parse_slots(std::string_view text) const {
    int value = 0;
    const char* end = text.data() + text.size();
    auto [stop, ec] = std::from_chars(text.data(), end, value);
    bool too_big = ec == std::errc::result_out_of_range && stop == end && text.front() != '-';
    if (!too_big && (text.empty() || ec != std::errc() || stop != end || value < 1))
      fail("slots must be a positive integer");
    if (too_big || value > kMaxSlots) fail(fmt::format("slots must be at most {}", kMaxSlots));
    return value;
  }

  std::string_view line_;
  int number_;
};

DiscoveryResult failure(std::string error) {
  DiscoveryResult r;
  r.error = std::move(error);
  return r;
}

std::string seconds_text(std::chrono::milliseconds d) {
  return fmt::format("{:g} s", static_cast<double>(d.count()) / 1000.0);
}

std::string last_nonempty_line(std::string_view text) {
  while (!text.empty()) {
    size_t start = text.find_last_of('\n');
    std::string_view line = trim(start == std::string_view::npos ? text : text.substr(start + 1));
    if (!line.empty()) return untrusted_text(line, kStderrLineLimit);
    if (start == std::string_view::npos) break;
    text = text.substr(0, start);
  }
  return "";
}

bool readable(int fd) {
  pollfd p{fd, POLLIN, 0};
  return ::poll(&p, 1, 0) > 0 && (p.revents & POLLIN) != 0;
}

// Reads what `fd` has now. Returns false at end of file (or a read error,
// which for a pipe means the same: nothing more will come).
bool drain_into(int fd, std::string& sink) {
  char buf[8192];
  while (true) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n > 0) {
      sink.append(buf, static_cast<size_t>(n));
      if (sink.size() > kMaxStdout) return true;  // the caller checks the size
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    return n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK);
  }
}

// The whole run. `cancel_fd` (or -1): readable means give up now; the child
// is killed with its group when `child` goes out of scope.
DiscoveryResult run_script(const std::string& script, const Environment& env, int default_slots,
                           std::chrono::milliseconds timeout, int cancel_fd) {
  SpawnSpec spec;
  spec.argv = {"/bin/sh", "-c", script};
  spec.env = env;
  spec.in = Stream::null();
  spec.out = Stream::pipe();
  spec.err = Stream::pipe();
  std::optional<ChildProcess> child;
  try {
    child.emplace(spec);
  } catch (const Error& e) {
    return failure(fmt::format("could not be started: {}", e.what()));
  }
  UniqueFd out = child->release_stdout();
  UniqueFd err = child->release_stderr();
  net::set_nonblocking(out.get());
  net::set_nonblocking(err.get());

  const auto deadline = Clock::now() + timeout;
  std::string out_text, err_text;
  bool exited = false;
  // Both pipes are polled together, so a script that writes much to stderr
  // cannot block while we wait on stdout (or the other way round).
  while (out.valid() || err.valid() || !exited) {
    pollfd fds[4];
    nfds_t n = 0;
    auto add = [&](int fd) -> pollfd* {
      if (fd < 0) return nullptr;
      fds[n] = pollfd{fd, POLLIN, 0};
      return &fds[n++];
    };
    pollfd* out_p = add(out.get());
    pollfd* err_p = add(err.get());
    pollfd* exit_p = add(exited ? -1 : child->exit_fd());
    pollfd* cancel_p = add(cancel_fd);
    int rc = ::poll(fds, n, net::poll_timeout_ms(deadline));
    if (rc < 0 && errno != EINTR) return failure("poll failed: " + errno_text(errno));
    if (rc > 0) {
      if (cancel_p && cancel_p->revents) return failure("was stopped: kolorun is shutting down");
      if (out_p && out_p->revents) {
        if (!drain_into(out.get(), out_text)) out.reset();
        if (out_text.size() > kMaxStdout) return failure("printed more than 1 MiB on stdout");
      }
      if (err_p && err_p->revents) {
        if (!drain_into(err.get(), err_text)) err.reset();
        if (err_text.size() > kStderrKept) err_text.erase(0, err_text.size() - kStderrKept);
      }
      // poll_exit() also kills the rest of the script's group, so output
      // pipes held open by its background children close now.
      if (exit_p && exit_p->revents) exited = child->poll_exit().has_value();
    }
    if ((out.valid() || err.valid() || !exited) && Clock::now() >= deadline) {
      if (exited)
        return failure(fmt::format("exited, but its output stayed open for more than {}",
                                   seconds_text(timeout)));
      return failure(fmt::format("did not finish within {}", seconds_text(timeout)));
    }
  }

  const ExitStatus& status = *child->exit_status();
  if (!status.ok()) {
    std::string why = status.describe();
    if (std::string line = last_nonempty_line(err_text); !line.empty()) why += ": " + line;
    return failure(std::move(why));
  }
  DiscoveryResult result;
  try {
    result.hosts = parse_discovery_output(out_text, default_slots);
  } catch (const InvalidArgument& e) {
    return failure(e.what());
  }
  result.ok = true;
  return result;
}

void check_default_slots(int default_slots) {
  if (default_slots < 1)
    throw InvalidArgument(
        fmt::format("slots per discovered host must be at least 1, not {}", default_slots));
}

}  // namespace

std::vector<HostSlots> parse_discovery_output(std::string_view text, int default_slots) {
  check_default_slots(default_slots);
  std::vector<HostSlots> hosts;
  std::map<std::string, int, std::less<>> first_line;
  int number = 0;
  while (!text.empty()) {
    size_t end = text.find('\n');
    std::string_view line = trim(text.substr(0, end));
    text = end == std::string_view::npos ? std::string_view() : text.substr(end + 1);
    ++number;
    if (line.empty() || line.front() == '#') continue;
    LineParser parser(line, number);
    HostSlots host = parser.parse(default_slots);
    auto [it, fresh] = first_line.emplace(host.host, number);
    if (!fresh)
      parser.fail(
          fmt::format("host '{}' is listed twice (first on line {})", host.host, it->second));
    hosts.push_back(std::move(host));
  }
  return hosts;
}

DiscoveryResult run_discovery_script(const std::string& script, int default_slots,
                                     std::chrono::milliseconds timeout) {
  check_default_slots(default_slots);
  try {
    return run_script(script, current_environment(), default_slots, timeout, -1);
  } catch (const Error& e) {
    // Resource trouble (pipes, poll) while running it: still a failed run,
    // which the driver retries, not a reason to end the job.
    return failure(e.what());
  }
}

HostDiscovery::HostDiscovery(std::string script, int default_slots,
                             std::chrono::milliseconds interval, std::chrono::milliseconds timeout)
    : script_(std::move(script)),
      env_(current_environment()),
      default_slots_(default_slots),
      interval_(interval),
      timeout_(timeout) {
  check_default_slots(default_slots);
  if (timeout.count() <= 0)
    throw InvalidArgument("the discovery script's timeout must be positive");
  if (interval.count() < 0) throw InvalidArgument("the discovery interval must not be negative");
  thread_ = std::thread([this] { run_loop(); });
}

HostDiscovery::~HostDiscovery() {
  stop_.notify();
  thread_.join();
}

std::optional<DiscoveryResult> HostDiscovery::take() {
  std::lock_guard lock(mutex_);
  return std::exchange(latest_, std::nullopt);
}

std::optional<DiscoveryResult> HostDiscovery::wait_first(std::chrono::milliseconds limit) {
  std::unique_lock lock(mutex_);
  result_ready_.wait_for(lock, limit, [this] { return latest_.has_value(); });
  return std::exchange(latest_, std::nullopt);
}

void HostDiscovery::run_loop() {
  while (true) {
    DiscoveryResult result;
    try {
      result = run_script(script_, env_, default_slots_, timeout_, stop_.fd());
    } catch (const std::exception& e) {
      result = failure(e.what());
    }
    if (readable(stop_.fd())) return;
    {
      std::lock_guard lock(mutex_);
      latest_ = std::move(result);
    }
    result_ready_.notify_all();
    // The pause counts from the end of this run, so a slow script is not
    // started again the moment it finishes.
    const auto next = Clock::now() + interval_;
    while (true) {
      pollfd p{stop_.fd(), POLLIN, 0};
      int rc = ::poll(&p, 1, net::poll_timeout_ms(next));
      if (rc > 0) return;
      if (rc < 0 && errno != EINTR) break;  // cannot wait: run again rather than spin
      if (rc == 0 && Clock::now() >= next) break;
    }
  }
}

}  // namespace kolo::runner::elastic
