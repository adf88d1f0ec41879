// detect_foreign_launcher: each launcher's variables as that launcher sets
// them (captured from OpenMPI 4.1 mpirun, torch 1.13 torchrun, and Slurm
// and MPICH's documentation), the order between launchers, and malformed
// values refused by name.
#include "core/launch/foreign_launcher.h"

#include <gtest/gtest.h>

#include <map>

#include "common/error.h"

namespace kolo::launch {
namespace {

using Env = std::map<std::string, std::string>;

settings::Lookup lookup(const Env& env) {
  return [env](std::string_view name) -> std::optional<std::string> {
    const auto it = env.find(std::string(name));
    if (it == env.end()) return std::nullopt;
    return it->second;
  };
}

std::optional<ForeignLauncher> detect(const Env& env) {
  return detect_foreign_launcher(lookup(env));
}

const Env kOpenMpi = {{"OMPI_COMM_WORLD_RANK", "1"},
                      {"OMPI_COMM_WORLD_SIZE", "4"},
                      {"OMPI_COMM_WORLD_LOCAL_RANK", "1"},
                      {"OMPI_COMM_WORLD_LOCAL_SIZE", "2"},
                      {"OMPI_MCA_ess_base_jobid", "672202753"},
                      {"PMIX_RANK", "1"}};

const Env kTorchrun = {
    {"RANK", "3"},
    {"WORLD_SIZE", "4"},
    {"LOCAL_RANK", "1"},
    {"LOCAL_WORLD_SIZE", "2"},
    {"MASTER_ADDR", "node-a"},
    {"MASTER_PORT", "29500"},
    {"TORCHELASTIC_RUN_ID", "none"},
    {"TORCHELASTIC_ERROR_FILE", "/tmp/torchelastic_x/none_abc/attempt_0/1/error.json"}};

const Env kSlurm = {{"SLURM_PROCID", "2"},
                    {"SLURM_STEP_NUM_TASKS", "5"},
                    {"SLURM_LOCALID", "0"},
                    {"SLURM_NODEID", "1"},
                    {"SLURM_STEP_TASKS_PER_NODE", "2(x2),1"},
                    {"SLURM_JOB_ID", "77"},
                    {"SLURM_STEP_ID", "3"},
                    {"SLURM_STEP_NODELIST", "gpu[07-09],cpu1"},
                    {"SLURMD_NODENAME", "gpu08"}};

TEST(ForeignLauncher, NoneWithoutLauncherVariables) {
  EXPECT_FALSE(detect({}).has_value());
  EXPECT_FALSE(detect({{"PATH", "/bin"}}).has_value());
  // A batch script's own process is not a rank: no srun step.
  EXPECT_FALSE(detect({{"SLURM_PROCID", "0"}, {"SLURM_NTASKS", "4"}}).has_value());
}

TEST(ForeignLauncher, OpenMpi) {
  const auto l = detect(kOpenMpi);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->name, "mpirun (OpenMPI)");
  EXPECT_EQ(l->rank, 1);
  EXPECT_EQ(l->size, 4);
  EXPECT_EQ(l->local_rank, 1);
  EXPECT_EQ(l->local_size, 2);
  EXPECT_EQ(l->job_key, "ompi-672202753");
  EXPECT_TRUE(l->mpi_launched);
}

TEST(ForeignLauncher, OpenMpisDaemonNamesTheNodeAsMpirunKnowsIt) {
  Env env = kOpenMpi;
  EXPECT_EQ(detect(env)->node_key, "");
  env["OMPI_MCA_orte_local_daemon_uri"] = "1455292416.2;tcp://198.19.0.3:58483";
  EXPECT_EQ(detect(env)->node_key, "ompi-daemon-1455292416.2");
  EXPECT_EQ(detect(env)->node_name, "") << "no node list: the machine's own name stays";
  env["OMPI_MCA_orte_node_regex"] = "vm,[3:198].19.0.2,[3:198].19.0.3@0(3)";
  EXPECT_EQ(detect(env)->node_name, "198.19.0.3");
}

TEST(ForeignLauncher, MpichHydra) {
  const auto l = detect({{"PMI_RANK", "2"},
                         {"PMI_SIZE", "3"},
                         {"MPI_LOCALRANKID", "0"},
                         {"MPI_LOCALNRANKS", "1"},
                         {"PMIX_NAMESPACE", "kvs_9"}});
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->name, "mpiexec (MPICH)");
  EXPECT_EQ(l->rank, 2);
  EXPECT_EQ(l->size, 3);
  EXPECT_EQ(l->local_size, 1);
  EXPECT_EQ(l->job_key, "hydra-kvs_9");
}

TEST(ForeignLauncher, Torchrun) {
  const auto l = detect(kTorchrun);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->name, "torchrun");
  EXPECT_EQ(l->rank, 3);
  EXPECT_EQ(l->size, 4);
  EXPECT_EQ(l->local_rank, 1);
  EXPECT_EQ(l->local_size, 2);
  EXPECT_EQ(l->rank0_host, "node-a");
  EXPECT_EQ(l->port_hint, 29501);
  EXPECT_EQ(l->job_key, "torchrun-/tmp/torchelastic_x/none_abc/attempt_0");
  EXPECT_FALSE(l->mpi_launched);
}

TEST(ForeignLauncher, TorchDistributedWithoutLocalRanksLeavesThemUnknown) {
  const auto l = detect({{"RANK", "1"}, {"WORLD_SIZE", "2"}, {"MASTER_ADDR", "job-master-0"}});
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->local_size, 0) << "found out by host once the ranks meet";
  EXPECT_EQ(l->rank0_host, "job-master-0");
}

TEST(ForeignLauncher, SlurmStep) {
  const auto l = detect(kSlurm);
  ASSERT_TRUE(l.has_value());
  EXPECT_EQ(l->name, "srun (Slurm)");
  EXPECT_EQ(l->rank, 2);
  EXPECT_EQ(l->size, 5);
  EXPECT_EQ(l->local_rank, 0);
  EXPECT_EQ(l->local_size, 2) << "node 1 of 2(x2),1";
  EXPECT_EQ(l->job_key, "slurm-77.3");
  EXPECT_EQ(l->rank0_host, "gpu07");
  EXPECT_EQ(l->node_name, "gpu08");
  EXPECT_EQ(l->node_key, "gpu08");
}

TEST(ForeignLauncher, OpenMpiWinsInsideASlurmStepAndTorchrunWinsOverSlurm) {
  Env mpi_in_slurm = kSlurm;
  mpi_in_slurm.insert(kOpenMpi.begin(), kOpenMpi.end());
  EXPECT_EQ(detect(mpi_in_slurm)->name, "mpirun (OpenMPI)");
  Env torchrun_in_slurm = kSlurm;
  torchrun_in_slurm.insert(kTorchrun.begin(), kTorchrun.end());
  EXPECT_EQ(detect(torchrun_in_slurm)->name, "torchrun");
}

TEST(ForeignLauncher, MalformedValuesAreRefusedByName) {
  Env bad = kOpenMpi;
  bad["OMPI_COMM_WORLD_RANK"] = "one";
  try {
    detect(bad);
    FAIL() << "accepted a rank that is not a number";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("OMPI_COMM_WORLD_RANK='one'"), std::string::npos)
        << e.what();
  }
  bad = kOpenMpi;
  bad["OMPI_COMM_WORLD_RANK"] = "4";
  EXPECT_THROW(detect(bad), InvalidArgument) << "rank 4 of 4";
  bad = kOpenMpi;
  bad.erase("OMPI_COMM_WORLD_SIZE");
  EXPECT_THROW(detect(bad), InvalidArgument) << "a rank without a size";
  Env slurm = kSlurm;
  slurm["SLURM_STEP_TASKS_PER_NODE"] = "x";
  EXPECT_THROW(detect(slurm), InvalidArgument);
}

TEST(ForeignLauncher, KolorunsLayoutWinsAndTheRankBeforeInitFollowsTheSameRule) {
  Env kolorun_under_mpirun = kOpenMpi;  // kolorun --mpi sets no KOLO_SIZE; kolorun does
  EXPECT_EQ(rank_before_init(lookup(kolorun_under_mpirun)), 1) << "mpirun's rank";
  kolorun_under_mpirun["KOLO_RANK"] = "0";
  kolorun_under_mpirun["KOLO_SIZE"] = "3";
  EXPECT_EQ(rank_before_init(lookup(kolorun_under_mpirun)), 0) << "kolorun's rank";
  EXPECT_FALSE(launcher_for(settings::Values::Read(lookup(kolorun_under_mpirun)),
                            lookup(kolorun_under_mpirun))
                   .has_value());
  Env elastic = kOpenMpi;
  elastic["KOLO_ELASTIC"] = "1";
  EXPECT_FALSE(launcher_for(settings::Values::Read(lookup(elastic)), lookup(elastic)).has_value())
      << "the elastic driver places its workers";
  EXPECT_EQ(rank_before_init(lookup({})), 0) << "a job of one";
}

TEST(ForeignLauncher, FirstHostOfASlurmHostList) {
  EXPECT_EQ(first_host_of_slurm_list("node1"), "node1");
  EXPECT_EQ(first_host_of_slurm_list("node1,node2"), "node1");
  EXPECT_EQ(first_host_of_slurm_list("n[3-5,9],m1"), "n3");
  EXPECT_EQ(first_host_of_slurm_list("a-[08-10]"), "a-08");
  EXPECT_EQ(first_host_of_slurm_list("rack[1-2]-n[3,4]"), "rack1-n3");
  EXPECT_THROW(first_host_of_slurm_list("n[1-2"), InvalidArgument);
  EXPECT_THROW(first_host_of_slurm_list(""), InvalidArgument);
}

}  // namespace
}  // namespace kolo::launch
