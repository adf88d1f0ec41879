// Host discovery: parsing what a user's script prints, running the script
// with every way it can go wrong (exit codes, signals, garbage, hangs,
// floods), and the periodic runner the elastic driver polls.
#include "runner/elastic/host_discovery.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <thread>

#include "common/error.h"

namespace kolo::runner::elastic {
namespace {

using namespace std::chrono_literals;
using Hosts = std::vector<HostSlots>;
using Clock = std::chrono::steady_clock;

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const InvalidArgument& e) {
    return e.what();
  }
  return "(no error)";
}

std::string parse_error(const std::string& text) {
  return error_of([&] { parse_discovery_output(text, 1); });
}

// A fresh directory for one test's scripts and files, removed afterwards.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "/kolo-discovery-XXXXXX";
    if (::mkdtemp(pattern.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  std::string path(const std::string& name) const { return path_ + "/" + name; }

  // Writes an executable shell script and returns its path.
  std::string script(const std::string& name, const std::string& body) const {
    std::string p = path(name);
    std::ofstream(p) << "#!/bin/sh\n" << body << "\n";
    ::chmod(p.c_str(), 0755);
    return p;
  }

  // Replaces a file whole (write, then rename), so a script reading it
  // concurrently sees the old or the new text, never half of one.
  void write(const std::string& name, const std::string& text) const {
    std::ofstream(path(name) + ".tmp") << text;
    std::filesystem::rename(path(name) + ".tmp", path(name));
  }

  std::string read(const std::string& name) const {
    std::ifstream in(path(name));
    return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }

 private:
  std::string path_;
};

// Running, not merely a zombie.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

bool eventually(const std::function<bool()>& condition, std::chrono::milliseconds limit) {
  auto deadline = Clock::now() + limit;
  while (!condition()) {
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(10ms);
  }
  return true;
}

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

// ---- parse_discovery_output ----

TEST(DiscoveryOutputTest, ParsesHostsWithAndWithoutSlots) {
  EXPECT_EQ(parse_discovery_output("a\nb:3\n  c:2  \r\n\t10.0.0.1:4\nuser@node-3.example.com:1", 2),
            (Hosts{{"a", 2}, {"b", 3}, {"c", 2}, {"10.0.0.1", 4}, {"user@node-3.example.com", 1}}));
}

TEST(DiscoveryOutputTest, SkipsCommentsAndBlankLines) {
  EXPECT_EQ(parse_discovery_output("# from the scheduler\n\n   \n  # indented\nh1\n\n", 1),
            (Hosts{{"h1", 1}}));
}

TEST(DiscoveryOutputTest, NoHostsIsAValidEmptyList) {
  EXPECT_EQ(parse_discovery_output("", 1), Hosts{});
  EXPECT_EQ(parse_discovery_output("# nothing free\n\n", 1), Hosts{});
}

TEST(DiscoveryOutputTest, AcceptsIPv6InBrackets) {
  EXPECT_EQ(parse_discovery_output("[::1]:2\n[fe80::1%eth0]\nuser@[fe80::2]:3\n", 4),
            (Hosts{{"[::1]", 2}, {"[fe80::1%eth0]", 4}, {"user@[fe80::2]", 3}}));
}

TEST(DiscoveryOutputTest, ErrorsNameTheLineAndItsText) {
  EXPECT_EQ(parse_error("a\nb:x\n"), "line 2 'b:x': slots must be a positive integer");
  EXPECT_EQ(parse_error("a:0"), "line 1 'a:0': slots must be a positive integer");
  EXPECT_EQ(parse_error("a:-1"), "line 1 'a:-1': slots must be a positive integer");
  EXPECT_EQ(parse_error("a:"), "line 1 'a:': slots must be a positive integer");
  EXPECT_EQ(parse_error("a:2.5"), "line 1 'a:2.5': slots must be a positive integer");
  EXPECT_EQ(parse_error("a:5000"), "line 1 'a:5000': slots must be at most 4096");
  EXPECT_EQ(parse_error("a:99999999999999"),
            "line 1 'a:99999999999999': slots must be at most 4096");
  EXPECT_EQ(parse_error("\n:3"), "line 2 ':3': empty host name");
  EXPECT_EQ(parse_error("[]:2"), "line 1 '[]:2': empty host name");
  EXPECT_EQ(parse_error("node 7:2"), "line 1 'node 7:2': whitespace inside the host name");
  EXPECT_EQ(parse_error("h1 # the big one"),
            "line 1 'h1 # the big one': whitespace inside the host name");
  EXPECT_EQ(parse_error("a\n# b\nb\na:2"),
            "line 4 'a:2': host 'a' is listed twice (first on line 1)");
  EXPECT_EQ(parse_error("fe80::1:2"),
            "line 1 'fe80::1:2': more than one ':' (write IPv6 addresses as [addr] or "
            "[addr]:slots)");
  EXPECT_EQ(parse_error("[::1"), "line 1 '[::1': '[' without a closing ']'");
  EXPECT_EQ(parse_error("[::1]2"), "line 1 '[::1]2': expected ':slots' after ']'");
  EXPECT_EQ(parse_error("a;reboot:2"), "line 1 'a;reboot:2': 'a;reboot' is not a host name");
  EXPECT_EQ(parse_error("-oProxyCommand=x"),
            "line 1 '-oProxyCommand=x': '-oProxyCommand=x' is not a host name");
}

TEST(DiscoveryOutputTest, AVeryLongBadLineIsShortenedInTheMessage) {
  std::string message = parse_error(std::string(100000, 'x') + " y");
  EXPECT_EQ(message.rfind("line 1 'xxxx", 0), 0u) << message;
  EXPECT_NE(message.find("... (100002 bytes)': whitespace inside the host name"), std::string::npos)
      << message;
  EXPECT_LT(message.size(), 200u);
}

TEST(DiscoveryOutputTest, BinaryGarbageIsEscapedInTheMessage) {
  std::string message = parse_error(std::string("\x1b\xff\x01host", 7));
  EXPECT_EQ(message, "line 1 '\\x1b\\xff\\x01host': '\\x1b\\xff\\x01host' is not a host name");
}

TEST(DiscoveryOutputTest, DefaultSlotsMustBePositive) {
  EXPECT_NE(error_of([] { parse_discovery_output("a", 0); }).find("at least 1"), std::string::npos);
  EXPECT_NE(error_of([] { run_discovery_script("true", -1, 1s); }).find("at least 1"),
            std::string::npos);
}

// ---- run_discovery_script ----

TEST(DiscoveryScriptTest, ReturnsTheHostsItPrints) {
  ScratchDir dir;
  auto r =
      run_discovery_script(dir.script("discover.sh", "echo h1:2\necho '# spare'\necho h2"), 3, 10s);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.hosts, (Hosts{{"h1", 2}, {"h2", 3}}));
  EXPECT_EQ(r.error, "");
}

TEST(DiscoveryScriptTest, PrintingNothingMeansNoHostsRightNow) {
  auto r = run_discovery_script("true", 1, 10s);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_TRUE(r.hosts.empty());
}

TEST(DiscoveryScriptTest, ScriptMayCarryArguments) {
  ScratchDir dir;
  std::string path = dir.script("discover.sh", "echo \"$1:$2\"\necho \"$3\"");
  auto r = run_discovery_script(path + " nodeA 4 nodeB", 1, 10s);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.hosts, (Hosts{{"nodeA", 4}, {"nodeB", 1}}));
}

TEST(DiscoveryScriptTest, FailureExitCodeComesWithTheLastStderrLine) {
  ScratchDir dir;
  auto r = run_discovery_script(dir.script("discover.sh",
                                           "echo h1\n"
                                           "echo 'first problem' >&2\n"
                                           "echo 'cannot reach the scheduler' >&2\n"
                                           "echo >&2\n"
                                           "exit 3"),
                                1, 10s);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.hosts.empty());
  EXPECT_EQ(r.error, "exited with code 3: cannot reach the scheduler");
}

TEST(DiscoveryScriptTest, FailureWithoutStderrAndDeathBySignal) {
  auto quiet = run_discovery_script("exit 4", 1, 10s);
  EXPECT_FALSE(quiet.ok);
  EXPECT_EQ(quiet.error, "exited with code 4");
  auto killed = run_discovery_script("kill -9 $$", 1, 10s);
  EXPECT_FALSE(killed.ok);
  EXPECT_EQ(killed.error, "was killed by signal 9 (SIGKILL)");
}

TEST(DiscoveryScriptTest, MissingScriptIsAFailureNamingIt) {
  auto r = run_discovery_script("/nonexistent/discover-hosts.sh", 1, 10s);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error.rfind("exited with code 127: ", 0), 0u) << r.error;
  EXPECT_NE(r.error.find("/nonexistent/discover-hosts.sh"), std::string::npos) << r.error;
}

TEST(DiscoveryScriptTest, GarbageOutputIsAParseError) {
  auto r = run_discovery_script("echo '<html>'; echo '<body>Service unavailable</body>'", 1, 10s);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.hosts.empty());
  EXPECT_EQ(r.error, "line 1 '<html>': '<html>' is not a host name");
}

TEST(DiscoveryScriptTest, HangingScriptIsKilledAtTheTimeout) {
  ScratchDir dir;
  std::string script = dir.script(
      "discover.sh", "echo h1\nsleep 30 &\necho $! > '" + dir.path("sleeper") + "'\nwait");
  auto start = Clock::now();
  auto r = run_discovery_script(script, 1, 1500ms);
  double took = seconds_since(start);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "did not finish within 1.5 s");
  EXPECT_GE(took, 1.49);
  EXPECT_LT(took, 10.0) << "a hanging script must not hold the driver";
  // What the script started goes with it.
  ASSERT_FALSE(dir.read("sleeper").empty());
  pid_t sleeper = std::stoi(dir.read("sleeper"));
  EXPECT_TRUE(eventually([&] { return !alive(sleeper); }, 5s)) << "the script's child survived";
}

TEST(DiscoveryScriptTest, EndlessOutputIsCutOffAtOneMebibyte) {
  auto start = Clock::now();
  auto r = run_discovery_script("while :; do echo host-name-that-repeats; done", 1, 60s);
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.error, "printed more than 1 MiB on stdout");
  EXPECT_LT(seconds_since(start), 30.0);
}

TEST(DiscoveryScriptTest, LargeStderrDoesNotBlockTheScript) {
  // 4 MiB of stderr is far beyond a pipe's buffer: reading only stdout
  // would deadlock here.
  auto r = run_discovery_script("head -c 4194304 /dev/zero | tr '\\0' e >&2; echo h1:2", 1, 30s);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.hosts, (Hosts{{"h1", 2}}));
}

TEST(DiscoveryScriptTest, BackgroundChildHoldingStdoutDoesNotDelayTheResult) {
  // The script exits at once, but its background sleeper inherited stdout;
  // ending the script's process group closes the pipe.
  auto start = Clock::now();
  auto r = run_discovery_script("sleep 30 & echo h1", 1, 20s);
  ASSERT_TRUE(r.ok) << r.error;
  EXPECT_EQ(r.hosts, (Hosts{{"h1", 1}}));
  EXPECT_LT(seconds_since(start), 10.0);
}

// ---- HostDiscovery ----

TEST(HostDiscoveryTest, FirstResultThenChangesBetweenRuns) {
  ScratchDir dir;
  dir.write("hosts", "h1:2\n");
  HostDiscovery discovery("cat '" + dir.path("hosts") + "'", 1, 20ms, 10s);
  auto first = discovery.wait_first(30s);
  ASSERT_TRUE(first.has_value());
  ASSERT_TRUE(first->ok) << first->error;
  EXPECT_EQ(first->hosts, (Hosts{{"h1", 2}}));

  dir.write("hosts", "h1:2\nh2\n");
  std::optional<DiscoveryResult> changed;
  EXPECT_TRUE(eventually(
      [&] {
        auto r = discovery.take();
        if (r && r->ok && r->hosts.size() == 2) changed = r;
        return changed.has_value();
      },
      30s));
  ASSERT_TRUE(changed.has_value());
  EXPECT_EQ(changed->hosts, (Hosts{{"h1", 2}, {"h2", 1}}));
}

TEST(HostDiscoveryTest, EachResultIsTakenOnce) {
  HostDiscovery discovery("echo h1", 1, std::chrono::hours(1), 10s);
  auto first = discovery.wait_first(30s);
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->hosts, (Hosts{{"h1", 1}}));
  // The next run is an hour away: nothing new to take or wait for.
  EXPECT_FALSE(discovery.take().has_value());
  EXPECT_FALSE(discovery.wait_first(50ms).has_value());
}

TEST(HostDiscoveryTest, ScriptFailuresAreResultsToo) {
  HostDiscovery discovery("echo 'no quota' >&2; exit 2", 1, std::chrono::hours(1), 10s);
  auto first = discovery.wait_first(30s);
  ASSERT_TRUE(first.has_value());
  EXPECT_FALSE(first->ok);
  EXPECT_EQ(first->error, "exited with code 2: no quota");
}

TEST(HostDiscoveryTest, DestructorKillsASleepingScriptPromptly) {
  ScratchDir dir;
  std::string script =
      dir.script("discover.sh", "sleep 30 &\necho $! > '" + dir.path("sleeper") + "'\nwait");
  pid_t sleeper = 0;
  Clock::time_point start;
  {
    HostDiscovery discovery(script, 1, 10ms, 60s);
    ASSERT_TRUE(eventually([&] { return !dir.read("sleeper").empty(); }, 30s));
    sleeper = std::stoi(dir.read("sleeper"));
    start = Clock::now();
  }
  EXPECT_LT(seconds_since(start), 5.0);
  EXPECT_TRUE(eventually([&] { return !alive(sleeper); }, 5s)) << "the script outlived its runner";
}

TEST(HostDiscoveryTest, DestructorInterruptsThePauseBetweenRuns) {
  Clock::time_point start;
  {
    HostDiscovery discovery("echo h1", 1, std::chrono::hours(1), 10s);
    ASSERT_TRUE(discovery.wait_first(30s).has_value());
    start = Clock::now();
  }
  EXPECT_LT(seconds_since(start), 5.0);
}

TEST(HostDiscoveryTest, RejectsBadSettings) {
  EXPECT_NE(error_of([] { HostDiscovery("true", 0, 1s, 1s); }).find("at least 1"),
            std::string::npos);
  EXPECT_NE(error_of([] { HostDiscovery("true", 1, 1s, 0s); }).find("timeout"), std::string::npos);
  EXPECT_NE(error_of([] { HostDiscovery("true", 1, -1s, 1s); }).find("interval"),
            std::string::npos);
}

}  // namespace
}  // namespace kolo::runner::elastic
