// kolorun as users run it, on this host: ranks get their layout, output is
// tagged line by line, a failing rank or a signal stops the whole job
// within seconds, and nothing is left running.
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <sstream>
#include <thread>

#include "runner/process.h"
#include "runner/remote_exec.h"
#include "support/child_process.h"

namespace kolo {
namespace {

using namespace std::chrono_literals;
using testing::ChildProcess;
using Clock = std::chrono::steady_clock;

// Running, not merely a zombie waiting for init to reap it.
bool alive(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  size_t close = text.rfind(')');
  return close != std::string::npos && close + 2 < text.size() && text[close + 2] != 'Z';
}

// Every number that follows "<marker> " in the text.
std::vector<pid_t> pids_after(const std::string& text, const std::string& marker) {
  std::vector<pid_t> pids;
  const std::string key = marker + " ";
  for (size_t pos = text.find(key); pos != std::string::npos; pos = text.find(key, pos + 1)) {
    size_t start = pos + key.size(), end = start;
    while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
    if (end > start) pids.push_back(std::stoi(text.substr(start, end - start)));
  }
  return pids;
}

class KolorunTest : public ::testing::Test {
 protected:
  std::unique_ptr<ChildProcess> start(std::vector<std::string> args,
                                      std::map<std::string, std::string> env = {}) {
    args.insert(args.begin(), KOLO_BIN_DIR "/kolorun");
    std::string prefix = ::testing::TempDir() + "/run-kolorun-" + std::to_string(::getpid()) + "-" +
                         ::testing::UnitTest::GetInstance()->current_test_info()->name() + "-" +
                         std::to_string(runs_++);
    outputs_.push_back(prefix);
    return std::make_unique<ChildProcess>(args, env, prefix);
  }
  void TearDown() override {
    for (const auto& prefix : outputs_) {
      std::filesystem::remove(prefix + ".out");
      std::filesystem::remove(prefix + ".err");
    }
  }
  // Runs kolorun to the end (60 s at most).
  runner::ExitStatus run(std::vector<std::string> args, std::string* out, std::string* err) {
    auto p = start(std::move(args));
    auto status = p->wait_for(60s);
    *out = p->stdout_text();
    *err = p->stderr_text();
    EXPECT_TRUE(status.has_value()) << "kolorun still running after 60 s\n" << *err;
    return status.value_or(runner::ExitStatus{-1, 0});
  }
  static void wait_for_text(ChildProcess& p, const std::string& text, int times) {
    auto deadline = Clock::now() + 30s;
    while (true) {
      std::string out = p.stdout_text();
      int found = 0;
      for (size_t pos = out.find(text); pos != std::string::npos; pos = out.find(text, pos + 1))
        ++found;
      if (found >= times) return;
      ASSERT_LT(Clock::now(), deadline) << "never saw '" << text << "' " << times << " times:\n"
                                        << out;
      std::this_thread::sleep_for(20ms);
    }
  }
  int runs_ = 0;
  std::vector<std::string> outputs_;  // files to remove after the test
};

TEST_F(KolorunTest, RanksGetHorovodsLayoutAndExports) {
  std::string out, err;
  auto status = run(
      {"-np", "3", "-H", "localhost:2,127.0.0.1:1", "-x", "FOO=bar", "sh", "-c",
       "echo $KOLO_RANK $KOLO_SIZE $KOLO_LOCAL_RANK $KOLO_LOCAL_SIZE $KOLO_CROSS_RANK "
       "$KOLO_CROSS_SIZE "
       "$HOROVOD_RANK $HOROVOD_SIZE $HOROVOD_LOCAL_RANK $HOROVOD_LOCAL_SIZE $HOROVOD_CROSS_RANK "
       "$HOROVOD_CROSS_SIZE $KOLO_HOSTNAME $HOROVOD_HOSTNAME $FOO ${#KOLO_SECRET} "
       "$KOLO_RENDEZVOUS_ADDR"},
      &out, &err);
  EXPECT_TRUE(status.ok()) << status.describe() << "\n" << err;
  EXPECT_NE(out.find("[0]<stdout>:0 3 0 2 0 2 0 3 0 2 0 2 localhost localhost bar 64 127.0.0.1\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[1]<stdout>:1 3 1 2 0 1 1 3 1 2 0 1 localhost localhost bar 64 127.0.0.1\n"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("[2]<stdout>:2 3 0 1 1 2 2 3 0 1 1 2 127.0.0.1 127.0.0.1 bar 64 127.0.0.1\n"),
            std::string::npos)
      << out;
}

TEST_F(KolorunTest, RanksRunACollectiveTogether) {
  std::string out, err;
  auto status = run({"-np", "4", "-x", "KOLO_TEST_ITERATIONS=3", "-x", "KOLO_TEST_COUNT=1000",
                     KOLO_BIN_DIR "/collective_worker"},
                    &out, &err);
  EXPECT_TRUE(status.ok()) << status.describe() << "\n" << err;
  for (int r = 0; r < 4; ++r)
    EXPECT_NE(out.find("[" + std::to_string(r) + "]<stdout>:iteration 3 ok\n"), std::string::npos)
        << out;
}

TEST_F(KolorunTest, LinesOfManyRanksNeverInterleave) {
  std::string out, err;
  // 3000 short lines each, then one line of 200 000 bytes written in many pieces.
  auto status =
      run({"-np", "4", "sh", "-c",
           "i=0; while [ $i -lt 3000 ]; do echo \"rank $KOLO_RANK line $i "
           "abcdefghijklmnopqrstuvwxyz\"; "
           "i=$((i+1)); done; head -c 200000 /dev/zero | tr '\\0' x; echo; echo to-stderr >&2"},
          &out, &err);
  ASSERT_TRUE(status.ok()) << status.describe() << "\n" << err;
  std::istringstream lines(out);
  std::string line;
  int short_lines = 0, long_lines = 0;
  while (std::getline(lines, line)) {
    int tag = -1, rank = -1, index = -1;
    if (std::sscanf(line.c_str(), "[%d]<stdout>:rank %d line %d", &tag, &rank, &index) == 3) {
      EXPECT_EQ(tag, rank) << line;
      EXPECT_EQ(line, "[" + std::to_string(tag) + "]<stdout>:rank " + std::to_string(rank) +
                          " line " + std::to_string(index) + " abcdefghijklmnopqrstuvwxyz");
      ++short_lines;
    } else {
      EXPECT_EQ(line.size(), 200000u + 12) << line.substr(0, 80);
      EXPECT_EQ(line.find_first_not_of('x', 12), std::string::npos) << line.substr(0, 80);
      ++long_lines;
    }
  }
  EXPECT_EQ(short_lines, 4 * 3000);
  EXPECT_EQ(long_lines, 4);
  for (int r = 0; r < 4; ++r)
    EXPECT_NE(err.find("[" + std::to_string(r) + "]<stderr>:to-stderr\n"), std::string::npos);
}

TEST_F(KolorunTest, FailingRankEndsTheJobNamingIt) {
  auto start_time = Clock::now();
  std::string out, err;
  auto status = run({"-np", "4", "sh", "-c",
                     "sleep 60 & echo child $!; echo rank $$; if [ $KOLO_RANK = 2 ]; then sleep "
                     "0.5; exit 3; fi; wait"},
                    &out, &err);
  EXPECT_LT(Clock::now() - start_time, 10s);
  EXPECT_EQ(status.code, 1);
  EXPECT_NE(err.find("kolorun: job failed: rank 2 (host localhost) exited with code 3\n"),
            std::string::npos)
      << err;
  auto pids = pids_after(out, "child");
  auto ranks = pids_after(out, "rank");
  EXPECT_EQ(pids.size(), 4u);
  pids.insert(pids.end(), ranks.begin(), ranks.end());
  for (pid_t pid : pids) EXPECT_FALSE(alive(pid)) << "pid " << pid << " outlived the job";
}

TEST_F(KolorunTest, RankKilledBySignalIsReported) {
  std::string out, err;
  auto status = run(
      {"-np", "2", "sh", "-c", "if [ $KOLO_RANK = 1 ]; then kill -9 $$; fi; sleep 60"}, &out, &err);
  EXPECT_EQ(status.code, 1);
  EXPECT_NE(
      err.find("kolorun: job failed: rank 1 (host localhost) was killed by signal 9 (SIGKILL)"),
      std::string::npos)
      << err;
}

TEST_F(KolorunTest, CtrlCReachesEveryRank) {
  auto p = start({"-np", "3", "sh", "-c",
                  "trap 'echo got INT; exit 4' INT; echo ready; while :; do sleep 0.05; done"});
  wait_for_text(*p, "ready", 3);
  p->signal(SIGINT);
  auto status = p->wait_for(10s);
  ASSERT_TRUE(status.has_value()) << "kolorun did not stop after SIGINT";
  EXPECT_EQ(status->code, 130);
  for (int r = 0; r < 3; ++r)
    EXPECT_NE(p->stdout_text().find("[" + std::to_string(r) + "]<stdout>:got INT"),
              std::string::npos);
  EXPECT_NE(p->stderr_text().find("kolorun: job stopped by SIGINT"), std::string::npos)
      << p->stderr_text();
}

TEST_F(KolorunTest, RanksThatIgnoreSigtermAreKilledAfterTheGracePeriod) {
  auto p = start({"-np", "2", "sh", "-c",
                  "trap '' TERM; echo rank $$; echo ready; while :; do sleep 0.05; done"});
  wait_for_text(*p, "ready", 2);
  auto ranks = pids_after(p->stdout_text(), "rank");
  auto sent = Clock::now();
  p->signal(SIGTERM);
  auto status = p->wait_for(15s);
  ASSERT_TRUE(status.has_value()) << "kolorun did not stop ranks that ignore SIGTERM";
  EXPECT_EQ(status->code, 143);
  EXPECT_GT(Clock::now() - sent, 4s);  // the 5 s grace period was given
  for (pid_t pid : ranks) EXPECT_FALSE(alive(pid));
}

TEST_F(KolorunTest, KilledLauncherTakesItsRanksWithIt) {
  auto p = start({"-np", "3", "sh", "-c", "echo rank $$; while :; do sleep 0.05; done"});
  wait_for_text(*p, "rank", 3);
  auto ranks = pids_after(p->stdout_text(), "rank");
  p->signal(SIGKILL);
  p->wait_for(10s);
  auto deadline = Clock::now() + 5s;
  for (pid_t pid : ranks) {
    while (alive(pid) && Clock::now() < deadline) std::this_thread::sleep_for(20ms);
    EXPECT_FALSE(alive(pid)) << "rank pid " << pid << " outlived kolorun";
  }
}

// A frozen rank (SIGSTOP) never exits; the healthy ranks that notice it exit
// first. kolorun's last line names what they reported, not the first of
// them to exit.
TEST_F(KolorunTest, FrozenRankIsNamedInTheLastLineNotTheFirstRankToExit) {
  auto p = start({"-np", "3", KOLO_BIN_DIR "/collective_worker"},
                 {{"KOLO_TEST_MODE", "engine"}, {"KOLO_PEER_TIMEOUT_SECONDS", "2"}});
  wait_for_text(*p, "iteration 3 ok", 3);
  const std::string out = p->stdout_text();
  const size_t line = out.find("[2]<stdout>:pid ");
  ASSERT_NE(line, std::string::npos) << out;
  const pid_t frozen = std::stoi(out.substr(line + std::string("[2]<stdout>:pid ").size()));
  ASSERT_EQ(::kill(frozen, SIGSTOP), 0);
  auto status = p->wait_for(30s);
  ASSERT_TRUE(status.has_value()) << "kolorun still running 30 s after rank 2 froze\n"
                                  << p->stderr_text();
  EXPECT_EQ(status->code, 1);
  const std::string err = p->stderr_text();
  const size_t last = err.rfind("kolorun: ");
  ASSERT_NE(last, std::string::npos) << err;
  const std::string last_line = err.substr(last);
  EXPECT_NE(last_line.find("job failed: rank "), std::string::npos) << err;
  // The report may have passed through another rank ("rank 0 reports: rank 1
  // aborted: rank 2 ... stopped answering"); the cause is in it either way.
  EXPECT_NE(last_line.find(" reports: "), std::string::npos) << err;
  EXPECT_NE(last_line.find("rank 2 (host localhost) stopped answering"), std::string::npos) << err;
  EXPECT_NE(last_line.find("; the first to exit was rank "), std::string::npos) << err;
  EXPECT_FALSE(alive(frozen));
}

TEST_F(KolorunTest, OutputFilenameWritesPerRankFiles) {
  std::string dir = ::testing::TempDir() + "/run-kolorun-out-" + std::to_string(::getpid());
  std::string out, err;
  auto status = run({"-np", "2", "--output-filename", dir, "sh", "-c",
                     "echo out $KOLO_RANK; echo err $KOLO_RANK >&2"},
                    &out, &err);
  ASSERT_TRUE(status.ok()) << err;
  for (int r = 0; r < 2; ++r) {
    std::ifstream o(dir + "/rank." + std::to_string(r) + "/stdout"),
        e(dir + "/rank." + std::to_string(r) + "/stderr");
    std::string o_text((std::istreambuf_iterator<char>(o)), {}),
        e_text((std::istreambuf_iterator<char>(e)), {});
    EXPECT_EQ(o_text, "out " + std::to_string(r) + "\n");
    EXPECT_EQ(e_text, "err " + std::to_string(r) + "\n");
  }
  EXPECT_NE(out.find("[1]<stdout>:out 1"), std::string::npos);
  std::filesystem::remove_all(dir);
}

TEST_F(KolorunTest, TimestampsPrefixLines) {
  std::string out, err;
  auto status = run({"-np", "1", "--prefix-output-with-timestamp", "echo", "hi"}, &out, &err);
  ASSERT_TRUE(status.ok()) << err;
  // "Sat Nov 21 12:34:56 2026[0]<stdout>:hi"
  std::tm parsed{};
  const char* rest = ::strptime(out.c_str(), "%a %b %d %H:%M:%S %Y", &parsed);
  ASSERT_NE(rest, nullptr) << out;
  EXPECT_EQ(std::string(rest), "[0]<stdout>:hi\n");
}

TEST_F(KolorunTest, BadInputExitsWithCodeTwo) {
  std::string out, err;
  EXPECT_EQ(run({"-np", "2", "run-no-such-program"}, &out, &err).code, 2);
  EXPECT_NE(err.find("kolorun: run-no-such-program: command not found"), std::string::npos) << err;
  EXPECT_EQ(run({"-np", "2", "--network-interface", "run-nosuchif0", "true"}, &out, &err).code, 2);
  EXPECT_NE(err.find("no such interface"), std::string::npos) << err;
  EXPECT_EQ(run({"--bogus-flag", "-np", "2", "true"}, &out, &err).code, 2);
}

TEST_F(KolorunTest, CheckBuildListsFeatures) {
  std::string out, err;
  EXPECT_TRUE(run({"--check-build"}, &out, &err).ok());
  EXPECT_NE(out.find("[X] TCP"), std::string::npos) << out;
  EXPECT_NE(out.find("Available Tensor Operations"), std::string::npos) << out;
}

// The remote side of an ssh launch, driven through a pipe as ssh would.
class RemoteHelperTest : public ::testing::Test {
 protected:
  void start(const std::string& script) {
    runner::SpawnSpec spec;
    spec.argv = {KOLO_BIN_DIR "/kolorun", runner::kRemoteHelperFlag};
    spec.env = runner::current_environment();
    spec.in = runner::Stream::pipe();
    spec.out = runner::Stream::pipe();
    helper_ = std::make_unique<runner::ChildProcess>(spec);
    runner::RemoteRequest request;
    request.cwd = "/tmp";
    request.argv = {"sh", "-c", script};
    request.env = {{"RUN_GREETING", "hello"}};
    request.grace_ms = 500;
    send(runner::encode_remote_request(request));
  }
  void send(const std::string& bytes) {
    ASSERT_EQ(::write(helper_->stdin_fd(), bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
  }
  std::string read_line() {
    std::string line;
    char c;
    while (::read(helper_->stdout_fd(), &c, 1) == 1 && c != '\n') line += c;
    return line;
  }
  std::unique_ptr<runner::ChildProcess> helper_;
};

TEST_F(RemoteHelperTest, RunsTheRequestAndPassesItsExitCode) {
  start("echo $RUN_GREETING from $(pwd); exit 7");
  EXPECT_EQ(read_line(), "hello from /tmp");
  auto status = helper_->wait_for(10s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 7);
}

TEST_F(RemoteHelperTest, ForwardsSignalsAsExitCode128PlusN) {
  start("echo ready; while :; do sleep 0.05; done");
  EXPECT_EQ(read_line(), "ready");
  send(runner::signal_line(SIGINT));
  auto status = helper_->wait_for(10s);
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(status->code, 128 + SIGINT);
}

TEST_F(RemoteHelperTest, LauncherGoneStopsTheRankAndWhatItStarted) {
  start("trap '' TERM; sleep 60 & echo $!; while :; do sleep 0.05; done");
  pid_t child = std::stoi(read_line());
  helper_->release_stdin().reset();      // EOF: as if kolorun and its ssh had died
  auto status = helper_->wait_for(10s);  // TERM is ignored, so SIGKILL after the 0.5 s grace
  ASSERT_TRUE(status.has_value()) << "helper did not stop its rank when its input closed";
  EXPECT_EQ(status->code, 128 + SIGKILL);
  for (int i = 0; i < 100 && alive(child); ++i) std::this_thread::sleep_for(10ms);
  EXPECT_FALSE(alive(child));
}

}  // namespace
}  // namespace kolo
