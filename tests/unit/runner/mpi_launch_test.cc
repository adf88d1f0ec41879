// The mpirun command kolorun --mpi runs, word for word, for representative
// jobs; and the environment it hands the ranks.
#include "runner/mpi_launch.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace kolo::runner {
namespace {

using Words = std::vector<std::string>;

LaunchOptions two_local_ranks() {
  LaunchOptions o;
  o.np = 2;
  o.hosts = {{"localhost", 2}};
  o.command = {"python", "train.py", "--lr", "0.1"};
  o.mpi.enabled = true;
  o.mpi.mpirun = "/usr/bin/mpirun";
  return o;
}

TEST(MpirunCommand, DefaultsAsHorovodrun) {
  const LaunchOptions o = two_local_ranks();
  EXPECT_EQ(mpirun_command(o, {"KOLO_SECRET", "PATH"}, /*as_root=*/false),
            (Words{"/usr/bin/mpirun", "--tag-output", "-np", "2", "-H", "localhost:2", "--bind-to",
                   "none", "--map-by", "slot", "-x", "KOLO_SECRET", "-x", "PATH", "python",
                   "train.py", "--lr", "0.1"}));
  EXPECT_EQ(mpirun_command(o, {}, /*as_root=*/true),
            (Words{"/usr/bin/mpirun", "--allow-run-as-root", "--tag-output", "-np", "2", "-H",
                   "localhost:2", "--bind-to", "none", "--map-by", "slot", "python", "train.py",
                   "--lr", "0.1"}));
}

TEST(MpirunCommand, EveryOptionInItsPlace) {
  LaunchOptions o = two_local_ranks();
  o.np = 4;
  o.hosts = {{"node1", 2}, {"node2", 2}};
  o.ssh.port = 2222;
  o.ssh.identity_file = "/k/id";
  o.output.timestamps = true;
  o.output.directory = "/tmp/out";
  o.mpi.binding_args = {"--bind-to", "core"};
  o.mpi.network_interfaces = {"eth0", "eth1"};
  o.mpi.extra_args = {"--mca", "orte_keep_fqdn_hostnames", "t", "--display-map"};
  EXPECT_EQ(mpirun_command(o, {"KOLO_IFACE"}, /*as_root=*/false), (Words{"/usr/bin/mpirun",
                                                                         "--tag-output",
                                                                         "-np",
                                                                         "4",
                                                                         "-H",
                                                                         "node1:2,node2:2",
                                                                         "--bind-to",
                                                                         "core",
                                                                         "--mca",
                                                                         "plm_rsh_args",
                                                                         "-p 2222 -i /k/id",
                                                                         "--mca",
                                                                         "btl_tcp_if_include",
                                                                         "eth0,eth1",
                                                                         "--timestamp-output",
                                                                         "--output-filename",
                                                                         "/tmp/out",
                                                                         "-x",
                                                                         "KOLO_IFACE",
                                                                         "--mca",
                                                                         "orte_keep_fqdn_hostnames",
                                                                         "t",
                                                                         "--display-map",
                                                                         "python",
                                                                         "train.py",
                                                                         "--lr",
                                                                         "0.1"}));
}

TEST(MpirunCommand, SshPolicyAndKnownHostsGoToMpirunsSsh) {
  LaunchOptions o = two_local_ranks();
  o.ssh.port = 2222;
  o.ssh.host_key_checking = "yes";
  o.ssh.known_hosts_file = "/k/known_hosts";
  o.ssh.options = {"ConnectTimeout=5"};
  const Words argv = mpirun_command(o, {}, /*as_root=*/false);
  const auto at = std::find(argv.begin(), argv.end(), "plm_rsh_args");
  ASSERT_NE(at, argv.end());
  EXPECT_EQ(*(at + 1),
            "-p 2222 -o ConnectTimeout=5 -o StrictHostKeyChecking=yes -o "
            "UserKnownHostsFile=/k/known_hosts");
  o.ssh = SshOptions{};  // ssh's defaults: nothing to pass
  const Words plain = mpirun_command(o, {}, /*as_root=*/false);
  EXPECT_EQ(std::find(plain.begin(), plain.end(), "plm_rsh_args"), plain.end());
}

TEST(MpirunCommand, UsersWordsAreNotRepeated) {
  LaunchOptions o = two_local_ranks();
  o.output.timestamps = true;
  o.mpi.extra_args = {"--allow-run-as-root", "--tag-output", "--timestamp-output"};
  EXPECT_EQ(mpirun_command(o, {}, /*as_root=*/true),
            (Words{"/usr/bin/mpirun", "-np", "2", "-H", "localhost:2", "--bind-to", "none",
                   "--map-by", "slot", "--allow-run-as-root", "--tag-output", "--timestamp-output",
                   "python", "train.py", "--lr", "0.1"}));
}

TEST(MpirunEnvironment, SettingsExportsAndRendezvousButNoLayout) {
  LaunchOptions o = two_local_ranks();
  o.settings = {{"KOLO_CYCLE_TIME", "2"}};
  o.extra_env = {{"MY_VAR", "x"}};
  const Environment launcher{{"PATH", "/bin"},      {"HOME", "/root"},    {"KOLO_RANK", "3"},
                             {"HOROVOD_SIZE", "9"}, {"PYTHONPATH", "/p"}, {"OTHER", "o"}};
  const RendezvousEndpoint store{"10.0.0.1", 4242, "s3cret"};
  const Environment env = mpirun_environment(launcher, o, store);
  EXPECT_EQ(env, (Environment{{"PATH", "/bin"},
                              {"HOME", "/root"},
                              {"PYTHONPATH", "/p"},
                              {"OTHER", "o"},
                              {"KOLO_CYCLE_TIME", "2"},
                              {"MY_VAR", "x"},
                              {"KOLO_RENDEZVOUS_ADDR", "10.0.0.1"},
                              {"KOLO_RENDEZVOUS_PORT", "4242"},
                              {"KOLO_SECRET", "s3cret"}}));
  EXPECT_EQ(mpirun_exported_names(launcher, o),
            (Words{"KOLO_CYCLE_TIME", "KOLO_RENDEZVOUS_ADDR", "KOLO_RENDEZVOUS_PORT", "KOLO_SECRET",
                   "MY_VAR", "PATH", "PYTHONPATH"}));
}

}  // namespace
}  // namespace kolo::runner
