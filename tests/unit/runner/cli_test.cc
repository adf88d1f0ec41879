// kolorun's command line: Horovod's spellings work, the command is left
// untouched, and every mistake gets a clear message and exit code 2.
#include "runner/cli.h"

#include <gtest/gtest.h>

#include <fstream>

namespace kolo::runner {
namespace {

CliResult parse(std::vector<std::string> args, Environment env = {{"HOME_DIR", "/home/me"}}) {
  return parse_command_line(args, env);
}

void expect_error(std::vector<std::string> args, const std::string& message) {
  CliResult r = parse(args);
  EXPECT_EQ(r.action, CliResult::Action::kExit) << message;
  EXPECT_EQ(r.exit_code, 2) << message;
  EXPECT_NE(r.error.find(message), std::string::npos) << "stderr was: " << r.error;
}

std::string temp_file(const std::string& name, const std::string& text) {
  std::string path = ::testing::TempDir() + "/run-cli-" + std::to_string(::getpid()) + "-" + name;
  std::ofstream(path) << text;
  return path;
}

TEST(CliTest, HorovodStyleCommandLine) {
  CliResult r = parse({"-np", "4", "-H", "a:2,b:2", "-p", "2222", "-i", "/k/id", "python",
                       "train.py", "-np", "9", "--lr", "0.1"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  const LaunchOptions& o = r.options;
  EXPECT_EQ(o.np, 4);
  EXPECT_EQ(o.hosts, (std::vector<HostSlots>{{"a", 2}, {"b", 2}}));
  EXPECT_EQ(o.ssh.port, 2222);
  EXPECT_EQ(o.ssh.identity_file, "/k/id");
  EXPECT_EQ(o.command, (std::vector<std::string>{"python", "train.py", "-np", "9", "--lr", "0.1"}));
}

TEST(CliTest, DefaultsToLocalhostAndAcceptsLongSpellings) {
  CliResult r = parse({"--num-proc=3", "--verbose", "--", "./prog", "--help"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.hosts, (std::vector<HostSlots>{{"localhost", 3}}));
  EXPECT_EQ(r.options.command, (std::vector<std::string>{"./prog", "--help"}));
  EXPECT_TRUE(r.options.verbose);
  EXPECT_TRUE(r.options.output.tagged);
}

TEST(CliTest, EngineFlagsBecomeEnvironment) {
  CliResult r =
      parse({"-np", "1", "--fusion-threshold-mb", "32", "--cycle-time-ms", "2.5",
             "--cache-capacity", "0", "--timeline-filename", "/tmp/t.json",
             "--timeline-mark-cycles", "--no-stall-check", "--stall-check-warning-time-seconds",
             "30", "--stall-check-shutdown-time-seconds", "90", "--log-level", "FATAL", "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.engine.to_environment(),
            (Environment{{"KOLO_FUSION_THRESHOLD", "33554432"},
                         {"KOLO_CYCLE_TIME", "2.5"},
                         {"KOLO_CACHE_CAPACITY", "0"},
                         {"KOLO_TIMELINE", "/tmp/t.json"},
                         {"KOLO_TIMELINE_MARK_CYCLES", "1"},
                         {"KOLO_STALL_CHECK_DISABLE", "1"},
                         {"KOLO_STALL_CHECK_TIME_SECONDS", "30"},
                         {"KOLO_STALL_SHUTDOWN_TIME_SECONDS", "90"},
                         {"KOLO_LOG_LEVEL", "error"}}));
}

TEST(CliTest, NoEngineFlagsExportNothing) {
  CliResult r = parse({"-np", "1", "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch);
  EXPECT_TRUE(r.options.engine.to_environment().empty());
}

TEST(CliTest, ExportsTakeValuesOrTheLaunchersEnvironment) {
  CliResult r =
      parse({"-np", "1", "-x", "A=1", "-x", "HOME_DIR", "-x", "B=x=y", "prog", "-x", "C"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.extra_env, (Environment{{"A", "1"}, {"B", "x=y"}, {"HOME_DIR", "/home/me"}}));
  EXPECT_EQ(r.options.command, (std::vector<std::string>{"prog", "-x", "C"}));
}

TEST(CliTest, SshAndOutputFlags) {
  CliResult r =
      parse({"-np", "2", "--ssh-host-key-checking", "yes", "--ssh-known-hosts-file", "/k/known",
             "--ssh-option", "ProxyJump=gw", "--ssh-option", "Compression=yes", "--start-timeout",
             "20", "--network-interfaces", "eth1,eth2", "--output-filename", "/tmp/out",
             "--prefix-output-with-timestamp", "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.ssh.host_key_checking, "yes");
  EXPECT_EQ(r.options.ssh.known_hosts_file, "/k/known");
  EXPECT_EQ(r.options.ssh.options, (std::vector<std::string>{"ProxyJump=gw", "Compression=yes"}));
  EXPECT_EQ(r.options.ssh.connect_timeout, std::chrono::seconds(20));
  EXPECT_EQ(r.options.start_timeout_seconds, 20);
  EXPECT_EQ(r.options.network_interface, "eth1");
  EXPECT_EQ(r.options.output.directory, "/tmp/out");
  EXPECT_TRUE(r.options.output.timestamps);
}

TEST(CliTest, HostfileIsRead) {
  std::string path = temp_file("hosts", "n1 slots=2\nn2:2\n");
  CliResult r = parse({"-np", "4", "--hostfile", path, "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.hosts, (std::vector<HostSlots>{{"n1", 2}, {"n2", 2}}));
  std::remove(path.c_str());
}

TEST(CliTest, BadInputExitsWithCodeTwo) {
  expect_error({"--frobnicate", "-np", "2", "prog"}, "--frobnicate");
  expect_error({"-np", "0", "prog"}, "-np must be at least 1, not 0");
  expect_error({"-np", "two", "prog"}, "--num-proc");
  expect_error({"-np", "5", "-H", "a:2,b:2", "prog"}, "-np 5 is more than the 4 slots");
  expect_error({"prog"}, "-np is required");
  expect_error({"-np", "2"}, "no program given");
  expect_error({"-np", "2", "-H", "a:2", "--hostfile", "/x", "prog"}, "excludes");
  expect_error({"-np", "2", "-H", "a:2,a:1", "prog"}, "host 'a' is listed twice");
  expect_error({"-np", "2", "--hostfile", "/nonexistent/run-hosts", "prog"},
               "cannot read hostfile");
  expect_error({"-np", "2", "-p", "70000", "prog"}, "--ssh-port");
  expect_error({"-np", "2", "--ssh-host-key-checking", "maybe", "prog"}, "--ssh-host-key-checking");
  expect_error({"-np", "2", "--log-level", "LOUD", "prog"}, "--log-level 'LOUD' is not one of");
  expect_error({"-np", "2", "--fusion-threshold-mb", "-1", "prog"},
               "--fusion-threshold-mb must be 0 or more");
  expect_error({"-np", "2", "--config-file", "/nonexistent/run-cfg.yaml", "prog"},
               "cannot read config file");
  expect_error({"-np", "2", "-x", "NOT_SET_ANYWHERE", "prog"}, "NOT_SET_ANYWHERE is not set");
}

TEST(CliTest, HelpVersionAndCheckBuild) {
  CliResult help = parse({"--help"});
  EXPECT_EQ(help.action, CliResult::Action::kExit);
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.output.find("--fusion-threshold-mb"), std::string::npos);
  CliResult version = parse({"--version"});
  EXPECT_EQ(version.exit_code, 0);
  EXPECT_NE(version.output.find("kolorun (Kolo)"), std::string::npos);
  EXPECT_EQ(parse({"-cb"}).action, CliResult::Action::kCheckBuild);
  EXPECT_EQ(parse({"--check-build"}).action, CliResult::Action::kCheckBuild);
}

TEST(CliTest, ConfigFileWithFlagsOverridingIt) {
  std::string path = temp_file("cfg.yaml",
                               "params:\n  fusion_threshold_mb: 16\n  cycle_time_ms: 1\n"
                               "timeline:\n  filename: /tmp/tl.json\n  mark_cycles: true\n"
                               "stall_check:\n  enabled: false\n  warning_time_seconds: 10\n"
                               "logging:\n  level: INFO\n");
  CliResult r = parse({"-np", "1", "--config-file", path, "--cycle-time-ms", "7", "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  Environment env = r.options.engine.to_environment();
  EXPECT_EQ(env["KOLO_FUSION_THRESHOLD"], "16777216");
  EXPECT_EQ(env["KOLO_CYCLE_TIME"], "7");
  EXPECT_EQ(env["KOLO_TIMELINE"], "/tmp/tl.json");
  EXPECT_EQ(env["KOLO_TIMELINE_MARK_CYCLES"], "1");
  EXPECT_EQ(env["KOLO_STALL_CHECK_DISABLE"], "1");
  EXPECT_EQ(env["KOLO_STALL_CHECK_TIME_SECONDS"], "10");
  EXPECT_EQ(env["KOLO_LOG_LEVEL"], "info");
  std::remove(path.c_str());
}

}  // namespace
}  // namespace kolo::runner
