// The one spawning primitive: exit statuses, pipes, process groups, and no
// survivors when a child's leader exits or its owner lets go of it.
#include "runner/process.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <thread>

namespace kolo::runner {
namespace {

using namespace std::chrono_literals;

SpawnSpec shell(const std::string& script) {
  SpawnSpec s;
  s.argv = {"/bin/sh", "-c", script};
  s.env = current_environment();
  return s;
}

std::string read_all(int fd) {
  std::string out;
  char buf[4096];
  ssize_t n;
  while ((n = ::read(fd, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  return out;
}

// Running, not merely a zombie waiting for init to reap it.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

TEST(ProcessTest, ReportsExitCodesAndSignals) {
  ChildProcess ok(shell("exit 0")), three(shell("exit 3")), killed(shell("kill -9 $$"));
  EXPECT_TRUE(ok.wait_for(10s)->ok());
  EXPECT_EQ(three.wait_for(10s)->code, 3);
  auto k = killed.wait_for(10s);
  ASSERT_TRUE(k.has_value());
  EXPECT_EQ(k->signal, SIGKILL);
  EXPECT_EQ(k->describe(), "was killed by signal 9 (SIGKILL)");
  EXPECT_EQ((ExitStatus{3, 0}.describe()), "exited with code 3");
}

TEST(ProcessTest, PipesEnvironmentAndWorkingDirectory) {
  SpawnSpec s = shell("echo \"$GREETING from $(pwd)\"; echo err >&2");
  s.env["GREETING"] = "hello";
  s.cwd = "/tmp";
  s.out = Stream::pipe();
  s.err = Stream::pipe();
  ChildProcess p(s);
  EXPECT_EQ(read_all(p.stdout_fd()), "hello from /tmp\n");
  EXPECT_EQ(read_all(p.stderr_fd()), "err\n");
  EXPECT_TRUE(p.wait_for(10s)->ok());
}

TEST(ProcessTest, UnknownProgramExits127WithAMessage) {
  SpawnSpec s;
  s.argv = {"/nonexistent/run-program"};
  s.err = Stream::pipe();
  ChildProcess p(s);
  EXPECT_EQ(p.wait_for(10s)->code, 127);
  EXPECT_NE(read_all(p.stderr_fd()).find("cannot execute '/nonexistent/run-program'"),
            std::string::npos);
}

TEST(ProcessTest, WhatTheChildStartedDiesWithIt) {
  // The child starts a background sleeper in its group and exits.
  SpawnSpec s = shell("sleep 60 & echo $!");
  s.out = Stream::pipe();
  ChildProcess p(s);
  std::string line;
  char c;
  while (::read(p.stdout_fd(), &c, 1) == 1 && c != '\n') line += c;
  pid_t sleeper = std::stoi(line);
  EXPECT_TRUE(p.wait_for(10s)->ok());
  for (int i = 0; i < 100 && alive(sleeper); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(alive(sleeper)) << "the sleeper outlived its rank";
}

TEST(ProcessTest, DestructorKillsTheWholeGroup) {
  pid_t leader;
  {
    ChildProcess p(shell("sleep 60 & sleep 60"));
    leader = p.pid();
    EXPECT_TRUE(p.running());
  }
  EXPECT_FALSE(alive(leader));
}

TEST(ProcessTest, FindProgramSearchesPath) {
  EXPECT_EQ(find_program("sh", "/nonexistent:/bin"), "/bin/sh");
  // A path is taken as it is, but only when it leads to an executable file.
  EXPECT_EQ(find_program("/bin/sh", ""), "/bin/sh");
  EXPECT_FALSE(find_program("./run-no-such-program", "/bin").has_value());
  const std::string plain =
      ::testing::TempDir() + "/find-program-plain-" + std::to_string(::getpid());
  { std::ofstream(plain) << "not a program\n"; }
  ::chmod(plain.c_str(), 0644);
  EXPECT_FALSE(find_program(plain, "").has_value());   // not executable
  EXPECT_FALSE(find_program("/tmp", "").has_value());  // a directory
  std::remove(plain.c_str());
  EXPECT_FALSE(find_program("run-no-such-program", "/bin:/usr/bin").has_value());
}

}  // namespace
}  // namespace kolo::runner
