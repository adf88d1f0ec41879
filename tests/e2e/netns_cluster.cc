#include "e2e/netns_cluster.h"

#include <dirent.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

namespace kolo::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kSshPort = 2222;
const char* const kSshd = "/usr/sbin/sshd";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool process_exists(int pid) {
  return ::kill(pid, 0) == 0 || errno == EPERM;
}

}  // namespace

std::string NetnsCluster::unavailable_reason() {
  if (::geteuid() != 0) return "needs root to create network namespaces";
  if (::access(kSshd, X_OK) != 0)
    return "no /usr/sbin/sshd (scripts/install-deps.sh installs openssh-server)";
  if (std::system("command -v ssh-keygen >/dev/null 2>&1 && command -v ssh >/dev/null 2>&1") != 0)
    return "no ssh or ssh-keygen (openssh-client)";
  const std::string probe = "run-e2e-probe-" + std::to_string(::getpid());
  if (std::system(("ip netns add " + probe + " >/dev/null 2>&1").c_str()) != 0)
    return "`ip netns add` does not work here (no CAP_SYS_ADMIN or no netns support)";
  std::system(("ip netns del " + probe + " >/dev/null 2>&1").c_str());
  return "";
}

int NetnsCluster::sh(const std::string& command, std::string* output) const {
  const std::string log =
      (dir_.empty() ? std::string("/tmp/run-e2e-") + std::to_string(::getpid()) : dir_ + "/sh") +
      ".log";
  ChildProcess p({"/bin/sh", "-c", command + " >" + log + " 2>&1"}, {}, log + ".wrapper");
  auto status = p.wait_for(60s);
  if (output != nullptr) *output += slurp(log);
  ::unlink(log.c_str());
  ::unlink((log + ".wrapper.out").c_str());
  ::unlink((log + ".wrapper.err").c_str());
  if (!status) return -1;
  return status->signal != 0 ? 128 + status->signal : status->code;
}

void NetnsCluster::must(const std::string& command) const {
  std::string output;
  if (int code = sh(command, &output); code != 0)
    throw std::runtime_error("e2e set-up step failed (exit " + std::to_string(code) +
                             "): " + command + "\n" + output);
}

std::vector<int> NetnsCluster::pids_in(const std::string& ns) const {
  std::string output;
  sh("ip netns pids " + ns, &output);
  std::vector<int> pids;
  std::istringstream in(output);
  int pid;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

std::vector<int> NetnsCluster::sshd_pids() const {
  std::vector<int> pids;
  for (const auto& s : sshd_) pids.push_back(s->pid());
  return pids;
}

NetnsCluster::NetnsCluster(int hosts) {
  // Namespaces of earlier runs that were killed before they could clean up.
  std::string listing;
  sh("ip netns list", &listing);
  std::istringstream lines(listing);
  std::string name;
  while (lines >> name) {
    int owner = 0;
    if (std::sscanf(name.c_str(), "run-e2e-%d-", &owner) == 1 && owner > 0 &&
        !process_exists(owner))
      sh("ip netns del " + name);
  }

  char dir_template[] = "/tmp/run-e2e-XXXXXX";
  if (::mkdtemp(dir_template) == nullptr) throw std::runtime_error("mkdtemp failed");
  dir_ = dir_template;
  prefix_ = "run-e2e-" + std::to_string(::getpid());
  launcher_ns_ = prefix_ + "-l";

  must("ip netns add " + launcher_ns_);
  must("ip -n " + launcher_ns_ + " link set lo up && ip -n " + launcher_ns_ +
       " link add br0 type bridge && ip -n " + launcher_ns_ +
       " addr add 198.18.0.1/24 dev br0 && ip -n " + launcher_ns_ + " link set br0 up");
  for (int h = 0; h < hosts; ++h) {
    const std::string ns = prefix_ + "-h" + std::to_string(h + 1);
    const std::string address = "198.18.0." + std::to_string(h + 2);
    const std::string veth = "vh" + std::to_string(h + 1);
    host_ns_.push_back(ns);
    addresses_.push_back(address);
    must("ip netns add " + ns);
    must("ip -n " + ns + " link set lo up && ip -n " + launcher_ns_ + " link add " + veth +
         " type veth peer name eth0 netns " + ns + " && ip -n " + launcher_ns_ + " link set " +
         veth + " master br0 up && ip -n " + ns + " addr add " + address +
         "/24 dev eth0 && ip -n " + ns + " link set eth0 up");
  }

  must("ssh-keygen -q -t ed25519 -N '' -f " + dir_ +
       "/host_key && ssh-keygen -q -t ed25519 -N '' -f " + dir_ + "/user_key && cp " + dir_ +
       "/user_key.pub " + dir_ + "/authorized_keys && chmod 600 " + dir_ + "/authorized_keys");
  const std::string host_key = slurp(dir_ + "/host_key.pub");
  std::ofstream known(known_hosts());
  for (const auto& a : addresses_) known << "[" << a << "]:" << kSshPort << " " << host_key;
  known.close();
  std::ofstream config(dir_ + "/sshd_config");
  config << "Port " << kSshPort << "\nListenAddress 0.0.0.0\nHostKey " << dir_ << "/host_key\n"
         << "AuthorizedKeysFile " << dir_ << "/authorized_keys\nPidFile " << dir_ << "/sshd.pid\n"
         << "PermitRootLogin prohibit-password\nPasswordAuthentication "
            "no\nKbdInteractiveAuthentication no\n"
         << "UsePAM no\nStrictModes no\nPrintMotd no\nLogLevel ERROR\nMaxStartups 100\nMaxSessions "
            "100\n";
  config.close();
  // sshd's privilege-separation directory; the package's service would make it.
  must("mkdir -p /run/sshd && chmod 755 /run/sshd");
  for (size_t h = 0; h < host_ns_.size(); ++h) start_sshd(h);
  for (size_t h = 0; h < host_ns_.size(); ++h) wait_for_ssh(h);
}

void NetnsCluster::start_sshd(size_t h) {
  // -D: stays our child (killed with us), -e: logs to the file below.
  sshd_.push_back(std::make_unique<ChildProcess>(
      std::vector<std::string>{
          runner::find_program("ip", "/usr/sbin:/sbin:/usr/bin:/bin").value_or("/usr/sbin/ip"),
          "netns", "exec", host_ns_[h], kSshd, "-D", "-e", "-f", dir_ + "/sshd_config"},
      std::map<std::string, std::string>{}, dir_ + "/sshd-h" + std::to_string(h + 1)));
}

void NetnsCluster::wait_for_ssh(size_t h) const {
  const std::string probe =
      "ip netns exec " + launcher_ns_ + " ssh -T -o BatchMode=yes -o ConnectTimeout=2 -o " +
      "StrictHostKeyChecking=yes -o UserKnownHostsFile=" + known_hosts() + " -i " + user_key() +
      " -p " + std::to_string(kSshPort) + " " + addresses_[h] + " true";
  auto deadline = std::chrono::steady_clock::now() + 15s;
  std::string output;
  while (sh(probe, &output) != 0) {
    if (std::chrono::steady_clock::now() > deadline)
      throw std::runtime_error("sshd on " + addresses_[h] + " never accepted us:\n" + output +
                               "\nsshd log:\n" +
                               slurp(dir_ + "/sshd-h" + std::to_string(h + 1) + ".err"));
    output.clear();
    std::this_thread::sleep_for(100ms);
  }
}

NetnsCluster::~NetnsCluster() {
  sshd_.clear();  // SIGKILL and reap each sshd
  // Anything still inside our namespaces is ours (sessions, ranks): end it.
  std::vector<std::string> all = host_ns_;
  all.push_back(launcher_ns_);
  for (const auto& ns : all)
    for (int pid : pids_in(ns)) ::kill(pid, SIGKILL);
  for (const auto& ns : all) sh("ip netns del " + ns);  // takes the veths and the bridge with it
  if (!dir_.empty()) sh("rm -rf " + dir_);
}

}  // namespace kolo::testing
