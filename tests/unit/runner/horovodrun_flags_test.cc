// Every horovodrun 0.28.1 flag spelling, written out (this list is the
// spec, not derived from the parser), with what kolorun does with it:
// launches (and which setting it sets), launches with a warning naming what
// Kolo lacks, or refuses with one line and exit code 2. docs/user-guide.md
// has the same decisions in words.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <filesystem>
#include <fstream>

#include "runner/cli.h"

#ifndef KOLO_SOURCE_DIR
#error "KOLO_SOURCE_DIR must point at the repository root"
#endif

namespace kolo::runner {
namespace {

enum class Outcome {
  kLaunch,      // accepted; `detail` is "" or a NAME=value the ranks get
  kWarn,        // accepted; `detail` is in a warning
  kRefuse,      // exit 2; `detail` is in the error line
  kExitOk,      // exit 0 (help, version); `detail` is in the output
  kCheckBuild,  // the build report
};

struct Case {
  std::vector<std::string> args;
  Outcome outcome;
  std::string detail;
};

// A directory holding an executable named mpirun, so that PATH lookups of
// --mpi find one whether or not this machine has OpenMPI; the parser only
// looks it up.
class HorovodrunFlags : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ =
        std::filesystem::path(::testing::TempDir()) / ("kolo-flags-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    const auto mpirun = dir_ / "mpirun";
    std::ofstream(mpirun) << "#!/bin/sh\nexit 0\n";
    ::chmod(mpirun.c_str(), 0755);
    hostfile_ = (dir_ / "hosts").string();
    std::ofstream(hostfile_) << "a slots=2\nb slots=2\n";
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  Environment env() const { return {{"PATH", dir_.string()}}; }

  void check(const Case& c) {
    const CliResult r = parse_command_line(c.args, env());
    std::string args;
    for (const auto& a : c.args) args += " " + a;
    std::string warnings;
    for (const auto& w : r.warnings) warnings += w + "\n";
    switch (c.outcome) {
      case Outcome::kLaunch:
      case Outcome::kWarn: {
        ASSERT_EQ(r.action, CliResult::Action::kLaunch) << args << ": " << r.error;
        if (c.outcome == Outcome::kLaunch) {
          EXPECT_EQ(warnings, "") << args;
          if (!c.detail.empty()) {
            const size_t eq = c.detail.find('=');
            EXPECT_EQ(r.options.setting(c.detail.substr(0, eq)), c.detail.substr(eq + 1)) << args;
          }
        } else {
          EXPECT_NE(warnings.find(c.detail), std::string::npos) << args << ": " << warnings;
        }
        break;
      }
      case Outcome::kRefuse:
        EXPECT_EQ(r.action, CliResult::Action::kExit) << args;
        EXPECT_EQ(r.exit_code, 2) << args;
        EXPECT_NE(r.error.find(c.detail), std::string::npos) << args << ": " << r.error;
        break;
      case Outcome::kExitOk:
        EXPECT_EQ(r.action, CliResult::Action::kExit) << args;
        EXPECT_EQ(r.exit_code, 0) << args;
        EXPECT_NE(r.output.find(c.detail), std::string::npos) << args;
        break;
      case Outcome::kCheckBuild:
        EXPECT_EQ(r.action, CliResult::Action::kCheckBuild) << args;
        break;
    }
  }

  std::filesystem::path dir_;
  std::string hostfile_;
};

TEST_F(HorovodrunFlags, EverySpellingIsAcceptedOrRefusedAsDocumented) {
  const std::string config =
      std::string(KOLO_SOURCE_DIR) + "/tests/unit/runner/data/horovod_config.test.yaml";
  using O = Outcome;
  const std::vector<Case> cases = {
      {{"-h"}, O::kExitOk, "--num-proc"},
      {{"--help"}, O::kExitOk, "--num-proc"},
      {{"-v"}, O::kExitOk, "kolorun (Kolo)"},
      {{"--version"}, O::kExitOk, "kolorun (Kolo)"},
      {{"-np", "2", "prog"}, O::kLaunch, ""},
      {{"--num-proc", "2", "prog"}, O::kLaunch, ""},
      {{"-cb"}, O::kCheckBuild, ""},
      {{"--check-build"}, O::kCheckBuild, ""},
      {{"-np", "2", "--disable-cache", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--start-timeout", "20", "prog"}, O::kLaunch, "KOLO_START_TIMEOUT=20"},
      {{"-np", "2", "--network-interfaces", "lo,eth0", "prog"}, O::kLaunch, "KOLO_IFACE=lo"},
      {{"-np", "2", "--network-interface", "lo", "prog"}, O::kLaunch, "KOLO_IFACE=lo"},
      {{"-np", "2", "--output-filename", "/tmp/out", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--verbose", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--config-file", config, "prog"}, O::kWarn, "Kolo has no NCCL"},
      {{"-np", "2", "-p", "2222", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--ssh-port", "2222", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "-i", "/k/id", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--ssh-identity-file", "/k/id", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--fusion-threshold-mb", "32", "prog"},
       O::kLaunch,
       "KOLO_FUSION_THRESHOLD=33554432"},
      {{"-np", "2", "--cycle-time-ms", "2", "prog"}, O::kLaunch, "KOLO_CYCLE_TIME=2"},
      {{"-np", "2", "--cache-capacity", "10", "prog"}, O::kLaunch, "KOLO_CACHE_CAPACITY=10"},
      {{"-np", "2", "--hierarchical-allreduce", "prog"},
       O::kLaunch,
       "KOLO_HIERARCHICAL_ALLREDUCE=1"},
      {{"-np", "2", "--no-hierarchical-allreduce", "prog"},
       O::kLaunch,
       "KOLO_HIERARCHICAL_ALLREDUCE=0"},
      {{"-np", "2", "--hierarchical-allgather", "prog"},
       O::kLaunch,
       "KOLO_HIERARCHICAL_ALLGATHER=1"},
      {{"-np", "2", "--no-hierarchical-allgather", "prog"},
       O::kLaunch,
       "KOLO_HIERARCHICAL_ALLGATHER=0"},
      {{"-np", "2", "--torus-allreduce", "prog"}, O::kWarn, "Kolo has no torus allreduce"},
      {{"-np", "2", "--no-torus-allreduce", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--autotune", "prog"}, O::kLaunch, "KOLO_AUTOTUNE=1"},
      {{"-np", "2", "--no-autotune", "prog"}, O::kLaunch, "KOLO_AUTOTUNE=0"},
      {{"-np", "2", "--autotune-log-file", "at.csv", "prog"},
       O::kLaunch,
       "KOLO_AUTOTUNE_LOG=at.csv"},
      {{"-np", "2", "--autotune-warmup-samples", "3", "prog"},
       O::kLaunch,
       "KOLO_AUTOTUNE_WARMUP_SAMPLES=3"},
      {{"-np", "2", "--autotune-steps-per-sample", "10", "prog"},
       O::kLaunch,
       "KOLO_AUTOTUNE_STEPS_PER_SAMPLE=10"},
      {{"-np", "2", "--autotune-bayes-opt-max-samples", "20", "prog"},
       O::kLaunch,
       "KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES=20"},
      {{"-np", "2", "--autotune-gaussian-process-noise", "0.75", "prog"},
       O::kLaunch,
       "KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE=0.75"},
      {{"-np", "2", "--min-np", "1", "-H", "a:2", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--min-num-proc", "1", "-H", "a:2", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--max-np", "4", "prog"}, O::kWarn, "--max-np applies only to elastic"},
      {{"-np", "2", "--max-num-proc", "4", "prog"}, O::kWarn, "--max-np applies only to elastic"},
      {{"-np", "2", "--slots-per-host", "2", "prog"}, O::kWarn, "--slots-per-host applies only"},
      {{"-np", "2", "--elastic-timeout", "60", "prog"}, O::kWarn, "--elastic-timeout applies only"},
      {{"-np", "2", "--reset-limit", "3", "prog"}, O::kWarn, "--reset-limit applies only"},
      {{"-np", "2", "--blacklist-cooldown-range", "1", "5", "prog"},
       O::kWarn,
       "--blacklist-cooldown-range applies only"},
      {{"-np", "2", "--timeline-filename", "tl.json", "prog"}, O::kLaunch, "KOLO_TIMELINE=tl.json"},
      {{"-np", "2", "--timeline-mark-cycles", "prog"}, O::kLaunch, "KOLO_TIMELINE_MARK_CYCLES=1"},
      {{"-np", "2", "--no-timeline-mark-cycles", "prog"},
       O::kLaunch,
       "KOLO_TIMELINE_MARK_CYCLES=0"},
      {{"-np", "2", "--no-stall-check", "prog"}, O::kLaunch, "KOLO_STALL_CHECK_DISABLE=1"},
      {{"-np", "2", "--stall-check", "prog"}, O::kLaunch, "KOLO_STALL_CHECK_DISABLE=0"},
      {{"-np", "2", "--stall-check-warning-time-seconds", "30", "prog"},
       O::kLaunch,
       "KOLO_STALL_CHECK_TIME_SECONDS=30"},
      {{"-np", "2", "--stall-check-shutdown-time-seconds", "90", "prog"},
       O::kLaunch,
       "KOLO_STALL_SHUTDOWN_TIME_SECONDS=90"},
      {{"-np", "2", "--mpi-threads-disable", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--no-mpi-threads-disable", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--mpi-args", "--tag-output", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--tcp", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--binding-args", "--bind-to core", "prog"},
       O::kWarn,
       "--binding-args applies only with --mpi"},
      {{"-np", "2", "--num-nccl-streams", "1", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--thread-affinity", "0", "prog"}, O::kWarn, "does not pin its background"},
      {{"-np", "2", "--gloo-timeout-seconds", "60", "prog"}, O::kLaunch, "KOLO_TIMEOUT_SECONDS=60"},
      {{"-np", "2", "--log-level", "INFO", "prog"}, O::kLaunch, "KOLO_LOG_LEVEL=info"},
      {{"-np", "2", "--log-with-timestamp", "prog"}, O::kLaunch, "KOLO_LOG_HIDE_TIME=0"},
      {{"-np", "2", "--log-without-timestamp", "prog"}, O::kLaunch, "KOLO_LOG_HIDE_TIME=1"},
      {{"-np", "2", "-prefix-timestamp", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--prefix-output-with-timestamp", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--log-hide-timestamp", "prog"}, O::kLaunch, "KOLO_LOG_HIDE_TIME=1"},
      {{"-np", "2", "--no-log-hide-timestamp", "prog"}, O::kLaunch, "KOLO_LOG_HIDE_TIME=0"},
      {{"-np", "2", "-H", "a:2", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--hosts", "a:2", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "-hostfile", hostfile_, "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--hostfile", hostfile_, "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--host-discovery-script", "discover-hosts", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--gloo", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--mpi", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--jsrun", "prog"},
       O::kRefuse,
       "kolorun: --jsrun needs IBM's jsrun, which is not in PATH"},
  };
  EXPECT_EQ(cases.size(), 71u + 2u);  // horovodrun's 71 spellings and -h/--help
  for (const Case& c : cases) check(c);
}

// argparse (allow_abbrev) takes a unique prefix of a long option, and a
// prefix of a single-dash one (-n for -np); an ambiguous prefix is an error.
TEST_F(HorovodrunFlags, AbbreviationsAsArgparseReadsThem) {
  using O = Outcome;
  const std::vector<Case> cases = {
      {{"-n", "2", "prog"}, O::kLaunch, ""},
      {{"-n=2", "prog"}, O::kLaunch, ""},
      {{"-c"}, O::kCheckBuild, ""},
      {{"-np", "2", "--verb", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--output-file", "/tmp/out", "prog"}, O::kLaunch, ""},
      {{"-np", "2", "--timeline-file", "tl.json", "prog"}, O::kLaunch, "KOLO_TIMELINE=tl.json"},
      {{"-np", "2", "--fusion", "8", "prog"}, O::kLaunch, "KOLO_FUSION_THRESHOLD=8388608"},
      {{"-np", "2", "--no-hier", "prog"},
       O::kRefuse,
       "ambiguous option --no-hier: could be --no-hierarchical-allreduce, "
       "--no-hierarchical-allgather"},
      {{"--num", "2", "prog"}, O::kRefuse, "ambiguous option --num"},
      {{"-np", "2", "-pre", "prog"}, O::kRefuse, "ambiguous option -pre: could be -p, -prefix"},
      {{"-np", "2", "-prefix", "prog"}, O::kRefuse, "ambiguous option -prefix"},
  };
  for (const Case& c : cases) check(c);
  const CliResult r = parse_command_line({"-n", "3", "--verb", "prog"}, env());
  EXPECT_EQ(r.options.np, 3);
  EXPECT_TRUE(r.options.verbose);
}

TEST_F(HorovodrunFlags, LauncherChoices) {
  // --mpi-args alone means mpirun, as in horovodrun built with MPI.
  CliResult r = parse_command_line({"-np", "2", "--mpi-args", "--tag-output", "prog"}, env());
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_TRUE(r.options.mpi.enabled);
  EXPECT_EQ(r.options.mpi.mpirun, (dir_ / "mpirun").string());
  EXPECT_EQ(r.options.mpi.extra_args, (std::vector<std::string>{"--tag-output"}));
  // Every interface named goes to mpirun; Kolo's own setting takes the first.
  r = parse_command_line(
      {"-np", "2", "--mpi", "--network-interface", "lo", "--network-interfaces", "lo,eth0", "prog"},
      env());
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.mpi.network_interfaces, (std::vector<std::string>{"lo", "eth0"}));
  EXPECT_EQ(r.options.setting("KOLO_IFACE"), "lo");
  // --gloo wins, and says that the MPI words go unused.
  r = parse_command_line({"-np", "2", "--gloo", "--mpi-args", "--tag-output", "prog"}, env());
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_FALSE(r.options.mpi.enabled);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("--mpi-args"), std::string::npos);
  // The three controllers exclude each other, as in horovodrun.
  r = parse_command_line({"-np", "2", "--gloo", "--mpi", "prog"}, env());
  EXPECT_EQ(r.exit_code, 2);
  // Without mpirun: one line, exit 2.
  const Environment no_mpirun{{"PATH", "/nonexistent"}};
  r = parse_command_line({"-np", "2", "--mpi", "prog"}, no_mpirun);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.error, "kolorun: --mpi needs mpirun, which is not in PATH\n");
  r = parse_command_line({"-np", "2", "--mpi-args", "-x A", "prog"}, no_mpirun);
  EXPECT_EQ(r.error, "kolorun: --mpi-args needs mpirun, which is not in PATH\n");
  // Elastic jobs: horovodrun always uses its own launcher.
  r = parse_command_line({"-np", "2", "--min-np", "1", "-H", "a:2", "--mpi", "prog"}, env());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.error.find("--mpi: elastic jobs start their workers with kolorun's own launcher"),
            std::string::npos)
      << r.error;
  r = parse_command_line(
      {"-np", "2", "--min-np", "1", "-H", "a:2", "--mpi-args", "--tag-output", "prog"}, env());
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_FALSE(r.options.mpi.enabled);
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_NE(r.warnings[0].find("--mpi-args: elastic jobs"), std::string::npos);
}

TEST_F(HorovodrunFlags, ConfigFileControllerAndFlagsOverIt) {
  const std::string path = (dir_ / "mpi.yaml").string();
  std::ofstream(path) << "controller: mpi\nlogging:\n  with_timestamp: false\n";
  CliResult r = parse_command_line({"-np", "2", "--config-file", path, "prog"}, env());
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_TRUE(r.options.mpi.enabled);
  EXPECT_EQ(r.options.setting("KOLO_LOG_HIDE_TIME"), "1");
  r = parse_command_line(
      {"-np", "2", "--config-file", path, "--gloo", "--log-with-timestamp", "prog"}, env());
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_FALSE(r.options.mpi.enabled);
  EXPECT_EQ(r.options.setting("KOLO_LOG_HIDE_TIME"), "0");
}

TEST_F(HorovodrunFlags, HorovodsRangeChecksForFeaturesKoloLacks) {
  for (const auto& [flag, value] : std::vector<std::pair<std::string, std::string>>{
           {"--num-nccl-streams", "-1"}, {"--thread-affinity", "-1"}}) {
    const CliResult r = parse_command_line({"-np", "2", flag, value, "prog"}, env());
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.error.find(flag + " " + value + ": must be"), std::string::npos) << r.error;
  }
}

// The autotune flags are settings now (KOLO_AUTOTUNE_*), with horovodrun's
// ranges: counts of 0 or more, the noise within [0, 1].
TEST_F(HorovodrunFlags, AutotuneFlagsKeepHorovodsRanges) {
  for (const auto& [flag, value, variable] : std::vector<std::array<std::string, 3>>{
           {"--autotune-warmup-samples", "-1", "KOLO_AUTOTUNE_WARMUP_SAMPLES"},
           {"--autotune-steps-per-sample", "-1", "KOLO_AUTOTUNE_STEPS_PER_SAMPLE"},
           {"--autotune-bayes-opt-max-samples", "-1", "KOLO_AUTOTUNE_BAYES_OPT_MAX_SAMPLES"},
           {"--autotune-gaussian-process-noise", "1.5", "KOLO_AUTOTUNE_GAUSSIAN_PROCESS_NOISE"}}) {
    const CliResult r = parse_command_line({"-np", "2", flag, value, "prog"}, env());
    EXPECT_EQ(r.exit_code, 2) << flag;
    EXPECT_NE(r.error.find(flag + " " + value + ": " + variable + "='" + value + "' must be"),
              std::string::npos)
        << r.error;
  }
  const CliResult r =
      parse_command_line({"-np", "2", "--autotune", "--no-autotune", "prog"}, env());
  EXPECT_EQ(r.exit_code, 2);
}

// The first command of seed 000 of issue 21, parsed exactly.
TEST_F(HorovodrunFlags, Seed000CommandParsesExactly) {
  const CliResult r = parse_command_line(
      {"-n", "4", "--hostfile", hostfile_, "--mpi-args",
       "--mca orte_keep_fqdn_hostnames t --allow-run-as-root --display-map --tag-output "
       "--timestamp-output",
       "bash", "-c", "python SCRIPT"},
      env());
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.np, 4);
  EXPECT_EQ(r.options.hosts, (std::vector<HostSlots>{{"a", 2}, {"b", 2}}));
  EXPECT_TRUE(r.options.mpi.enabled);
  EXPECT_EQ(
      r.options.mpi.extra_args,
      (std::vector<std::string>{"--mca", "orte_keep_fqdn_hostnames", "t", "--allow-run-as-root",
                                "--display-map", "--tag-output", "--timestamp-output"}));
  EXPECT_EQ(r.options.command, (std::vector<std::string>{"bash", "-c", "python SCRIPT"}));
}

}  // namespace
}  // namespace kolo::runner
