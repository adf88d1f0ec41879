// kolorun across hosts as users run it: three hosts (network namespaces
// joined by veth), each with sshd on port 2222, a hostfile, and
// `kolorun -np 6 --hostfile hosts -p 2222 ...` from a fourth. A collective
// runs across them; then one rank is killed and the job must end within
// 10 s naming it, with no process of the job left on any host.
#include <dirent.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <fstream>
#include <iterator>
#include <memory>
#include <regex>
#include <set>
#include <thread>

#include "e2e/netns_cluster.h"
#include "support/child_process.h"

namespace kolo {
namespace {

using namespace std::chrono_literals;
using Clock = std::chrono::steady_clock;
using testing::ChildProcess;
using testing::NetnsCluster;

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every process whose environment holds `entry` (e.g. "RUN_E2E_MARKER=x").
std::vector<int> processes_with_env(const std::string& entry) {
  std::vector<int> pids;
  DIR* proc = ::opendir("/proc");
  if (proc == nullptr) return pids;
  while (dirent* d = ::readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(d->d_name[0]))) continue;
    std::string env = read_file(std::string("/proc/") + d->d_name + "/environ");
    if (env.find(std::string(1, '\0') + entry + '\0') != std::string::npos ||
        env.rfind(entry + '\0', 0) == 0)
      pids.push_back(std::stoi(d->d_name));
  }
  ::closedir(proc);
  return pids;
}

std::string env_value(int pid, const std::string& name) {
  std::string env = read_file("/proc/" + std::to_string(pid) + "/environ");
  size_t pos = env.find(std::string(1, '\0') + name + "=");
  if (pos == std::string::npos) return "";
  pos += name.size() + 2;
  return env.substr(pos, env.find('\0', pos) - pos);
}

class SshClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason = NetnsCluster::unavailable_reason();
    if (!reason.empty()) GTEST_SKIP() << "end-to-end ssh test skipped: " << reason;
    cluster_ = std::make_unique<NetnsCluster>(3);
    hostfile_ = cluster_->dir() + "/hosts";
    std::ofstream hosts(hostfile_);
    hosts << "# three hosts, two slots each\n";
    for (const auto& a : cluster_->host_addresses()) hosts << a << " slots=2\n";
    marker_ = "RUN_E2E_MARKER=" + cluster_->launcher_namespace();
  }

  std::unique_ptr<ChildProcess> kolorun(std::vector<std::string> rank_command,
                                        std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {ip_,
                                     "netns",
                                     "exec",
                                     cluster_->launcher_namespace(),
                                     KOLO_BIN_DIR "/kolorun",
                                     "-np",
                                     "6",
                                     "--hostfile",
                                     hostfile_,
                                     "-p",
                                     "2222",
                                     "-i",
                                     cluster_->user_key(),
                                     "--ssh-host-key-checking",
                                     "yes",
                                     "--ssh-known-hosts-file",
                                     cluster_->known_hosts(),
                                     "--start-timeout",
                                     "20",
                                     "-x",
                                     marker_};
    argv.insert(argv.end(), extra.begin(), extra.end());
    argv.insert(argv.end(), rank_command.begin(), rank_command.end());
    return std::make_unique<ChildProcess>(argv, std::map<std::string, std::string>{},
                                          cluster_->dir() + "/kolorun-" + std::to_string(runs_++));
  }

  // No process of this job anywhere, and nothing but sshd in the host namespaces.
  void expect_nothing_left() {
    auto deadline = Clock::now() + 5s;
    const std::vector<int> sshd_pids = cluster_->sshd_pids();
    const std::set<int> sshd(sshd_pids.begin(), sshd_pids.end());
    std::vector<int> stray;
    do {
      stray = processes_with_env(marker_);
      for (const auto& ns : cluster_->host_namespaces())
        for (int pid : cluster_->pids_in(ns))
          if (!sshd.count(pid)) stray.push_back(pid);
      for (int pid : cluster_->pids_in(cluster_->launcher_namespace())) stray.push_back(pid);
      if (stray.empty()) return;
      std::this_thread::sleep_for(50ms);
    } while (Clock::now() < deadline);
    std::string list;
    for (int pid : stray)
      list +=
          std::to_string(pid) + " (" + read_file("/proc/" + std::to_string(pid) + "/comm") + ") ";
    ADD_FAILURE() << "processes left 5 s after the job: " << list;
  }

  std::unique_ptr<NetnsCluster> cluster_;
  std::string hostfile_, marker_;
  std::string ip_ =
      runner::find_program("ip", "/usr/sbin:/sbin:/usr/bin:/bin").value_or("/usr/sbin/ip");
  int runs_ = 0;
};

TEST_F(SshClusterTest, CollectiveRunsAcrossThreeHostsOverSsh) {
  // Each rank reports where it runs; then all six allreduce together.
  auto where = kolorun(
      {"sh", "-c",
       "echo $KOLO_RANK $KOLO_LOCAL_RANK/$KOLO_LOCAL_SIZE $KOLO_CROSS_RANK/$KOLO_CROSS_SIZE "
       "$HOROVOD_HOSTNAME $(ip -o -4 addr show dev eth0 | awk '{print $4}') $(pwd)"});
  auto status = where->wait_for(60s);
  ASSERT_TRUE(status.has_value()) << "kolorun still running after 60 s";
  ASSERT_TRUE(status->ok()) << status->describe() << "\n" << where->stderr_text();
  char cwd[4096] = {};
  ASSERT_NE(::getcwd(cwd, sizeof cwd), nullptr);
  const std::string out = where->stdout_text();
  for (int r = 0; r < 6; ++r) {
    const std::string host = cluster_->host_addresses()[r / 2];
    const std::string want = "[" + std::to_string(r) + "]<stdout>:" + std::to_string(r) + " " +
                             std::to_string(r % 2) + "/2 " + std::to_string(r / 2) + "/3 " + host +
                             " " + host + "/24 " + cwd + "\n";
    EXPECT_NE(out.find(want), std::string::npos) << "missing: " << want << "in:\n" << out;
  }

  auto job = kolorun({KOLO_BIN_DIR "/collective_worker"},
                     {"-x", "KOLO_TEST_ITERATIONS=5", "-x", "KOLO_TEST_COUNT=100000"});
  status = job->wait_for(60s);
  ASSERT_TRUE(status.has_value()) << "kolorun still running after 60 s";
  EXPECT_TRUE(status->ok()) << status->describe() << "\n" << job->stderr_text();
  for (int r = 0; r < 6; ++r)
    EXPECT_NE(job->stdout_text().find("[" + std::to_string(r) + "]<stdout>:iteration 5 ok"),
              std::string::npos)
        << job->stdout_text() << job->stderr_text();
  expect_nothing_left();
}

TEST_F(SshClusterTest, KillingOneRankEndsTheJobNamingItAndLeavesNothing) {
  auto job = kolorun({KOLO_BIN_DIR "/collective_worker"},
                     {"-x", "KOLO_TEST_ITERATIONS=0", "-x", "KOLO_TEST_COUNT=10000"});
  // Wait until all six are working.
  auto deadline = Clock::now() + 30s;
  while (true) {
    int working = 0;
    for (int r = 0; r < 6; ++r)
      working += job->stdout_text().find("[" + std::to_string(r) + "]<stdout>:iteration 2 ok") !=
                 std::string::npos;
    if (working == 6) break;
    ASSERT_TRUE(job->running()) << "job ended early: " << job->stderr_text();
    ASSERT_LT(Clock::now(), deadline) << "ranks never all started:\n"
                                      << job->stdout_text() << job->stderr_text();
    std::this_thread::sleep_for(50ms);
  }

  // The secret reached the ranks by environment only: no command line on any host shows it.
  int victim = -1;
  std::string secret;
  for (int pid : processes_with_env(marker_))
    if (env_value(pid, "KOLO_RANK") == "4" &&
        read_file("/proc/" + std::to_string(pid) + "/comm").find("collective") == 0) {
      victim = pid;
      secret = env_value(pid, "KOLO_SECRET");
    }
  ASSERT_GT(victim, 0) << "could not find rank 4's process";
  ASSERT_EQ(secret.size(), 64u);
  DIR* proc = ::opendir("/proc");
  while (dirent* d = ::readdir(proc)) {
    if (!std::isdigit(static_cast<unsigned char>(d->d_name[0]))) continue;
    EXPECT_EQ(read_file(std::string("/proc/") + d->d_name + "/cmdline").find(secret),
              std::string::npos)
        << "the job secret is on the command line of pid " << d->d_name;
  }
  ::closedir(proc);

  auto killed_at = Clock::now();
  ::kill(victim, SIGKILL);
  auto status = job->wait_for(10s);
  ASSERT_TRUE(status.has_value()) << "job still running 10 s after rank 4 was killed\n"
                                  << job->stderr_text();
  RecordProperty(
      "job_ended_ms",
      static_cast<int>(
          std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - killed_at).count()));
  EXPECT_EQ(status->code, 1);
  const std::string err = job->stderr_text();
  EXPECT_NE(err.find("kolorun: job failed: rank 4 (host " + cluster_->host_addresses()[2] +
                     ") was killed by signal 9 (SIGKILL)"),
            std::string::npos)
      << err;
  expect_nothing_left();
}

}  // namespace
}  // namespace kolo
