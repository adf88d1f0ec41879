// kolorun's command line: Horovod's spellings work, the command is left
// untouched, and every mistake gets a clear message and exit code 2.
#include "runner/cli.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
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
  // One line, kolorun's, whoever found the problem (CLI11 wrote two of its own).
  EXPECT_EQ(r.error.rfind("kolorun: ", 0), 0u) << r.error;
  EXPECT_EQ(std::count(r.error.begin(), r.error.end(), '\n'), 1) << r.error;
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
  EXPECT_EQ(r.options.settings, (Environment{{"KOLO_FUSION_THRESHOLD", "33554432"},
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
  EXPECT_TRUE(r.options.settings.empty());
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
  EXPECT_EQ(r.options.setting("KOLO_START_TIMEOUT"), "20");
  EXPECT_EQ(r.options.setting("KOLO_IFACE"), "eth1");
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
  expect_error({"-np", "2", "--log-level", "LOUD", "prog"},
               "--log-level LOUD: KOLO_LOG_LEVEL='LOUD' is not one of");
  expect_error({"-np", "2", "--fusion-threshold-mb", "-1", "prog"},
               "--fusion-threshold-mb -1: KOLO_FUSION_THRESHOLD='-1048576' is not a size");
  expect_error({"-np", "2", "--config-file", "/nonexistent/run-cfg.yaml", "prog"},
               "cannot read config file");
  expect_error({"-np", "2", "-x", "NOT_SET_ANYWHERE", "prog"}, "NOT_SET_ANYWHERE is not set");
}

// The launcher refuses what a rank would refuse, in the rank's words, before
// anything starts: from a flag, the file, -x or its own environment.
TEST(CliTest, SettingsARankWouldRefuseStopTheLauncher) {
  const std::string rank_words =
      "KOLO_CYCLE_TIME='0' must be above 0 and at most 10000 milliseconds";
  expect_error({"-np", "2", "--cycle-time-ms", "0", "prog"}, "--cycle-time-ms 0: " + rank_words);
  expect_error({"-np", "2", "-x", "KOLO_CYCLE_TIME=0", "prog"}, rank_words);
  CliResult from_env = parse({"-np", "2", "prog"}, {{"KOLO_SHM_SLOT_BYTES", "1K"}});
  EXPECT_EQ(from_env.exit_code, 2);
  EXPECT_NE(from_env.error.find("KOLO_SHM_SLOT_BYTES='1K' must be between 4K and 1G"),
            std::string::npos)
      << from_env.error;
  expect_error({"-np", "2", "--stall-check-warning-time-seconds", "60",
                "--stall-check-shutdown-time-seconds", "10", "prog"},
               "KOLO_STALL_SHUTDOWN_TIME_SECONDS (10 s) must be 0 or at least "
               "KOLO_STALL_CHECK_TIME_SECONDS (60 s)");
  std::string path = temp_file("bad-cfg.yaml", "params:\n  cycle_time_ms: 0\n");
  expect_error({"-np", "2", "--config-file", path, "prog"},
               "params.cycle_time_ms 0: " + rank_words);
  std::remove(path.c_str());
  // Accepted values pass, whatever their case.
  EXPECT_EQ(parse({"-np", "2", "prog"}, {{"KOLO_LOG_LEVEL", "DEBUG"}}).action,
            CliResult::Action::kLaunch);
}

TEST(CliTest, EverySettingFlagIsInTheHelp) {
  const std::string help = parse({"--help"}).output;
  for (const char* flag :
       {"--start-timeout", "--network-interface", "--fusion-threshold-mb", "--cycle-time-ms",
        "--cache-capacity", "--timeline-filename", "--timeline-mark-cycles", "--no-stall-check",
        "--stall-check-warning-time-seconds", "--stall-check-shutdown-time-seconds", "--log-level"})
    EXPECT_NE(help.find(flag), std::string::npos) << flag;
  EXPECT_NE(help.find("KOLO_CYCLE_TIME"), std::string::npos);
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
  Environment env = r.options.settings;
  EXPECT_EQ(env["KOLO_FUSION_THRESHOLD"], "16777216");
  EXPECT_EQ(env["KOLO_CYCLE_TIME"], "7");
  EXPECT_EQ(env["KOLO_TIMELINE"], "/tmp/tl.json");
  EXPECT_EQ(env["KOLO_TIMELINE_MARK_CYCLES"], "1");
  EXPECT_EQ(env["KOLO_STALL_CHECK_DISABLE"], "1");
  EXPECT_EQ(env["KOLO_STALL_CHECK_TIME_SECONDS"], "10");
  EXPECT_EQ(env["KOLO_LOG_LEVEL"], "info");
  std::remove(path.c_str());
}

// ---- Elastic mode ----

// A temp directory of its own per test, so scripts never collide.
class ScratchDir {
 public:
  ScratchDir() {
    std::string pattern = ::testing::TempDir() + "/kolo-cli-XXXXXX";
    path_ = ::mkdtemp(pattern.data()) != nullptr ? pattern : "";
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  std::string write(const std::string& name, const std::string& text, mode_t mode) const {
    std::string file = path_ + "/" + name;
    std::ofstream(file) << text;
    ::chmod(file.c_str(), mode);
    return file;
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// An executable discovery script, so the path check passes.
struct DiscoveryScript {
  ScratchDir dir;
  std::string path = dir.write("discover.sh", "#!/bin/sh\necho localhost:4\n", 0755);
};

TEST(CliElasticTest, NotElasticByDefault) {
  CliResult r = parse({"-np", "2", "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  const ElasticOptions& e = r.options.elastic;
  EXPECT_FALSE(e.enabled);
  EXPECT_EQ(e.min_np, 0);
  EXPECT_FALSE(e.max_np.has_value());
  EXPECT_EQ(e.discovery_script, "");
}

TEST(CliElasticTest, DiscoveryScriptWithEveryFlag) {
  DiscoveryScript script;
  const std::string command = script.path + " --zone a";
  CliResult r =
      parse({"-np", "4", "--min-np", "2", "--max-np", "8", "--slots-per-host", "3",
             "--elastic-timeout", "120", "--reset-limit", "5", "--blacklist-cooldown-range", "1.5",
             "30", "--host-discovery-script", command, "train.py", "--epochs=3"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  const LaunchOptions& o = r.options;
  EXPECT_EQ(o.np, 4);
  EXPECT_TRUE(o.hosts.empty());  // found by the script at run time
  EXPECT_EQ(o.command, (std::vector<std::string>{"train.py", "--epochs=3"}));
  const ElasticOptions& e = o.elastic;
  EXPECT_TRUE(e.enabled);
  EXPECT_EQ(e.min_np, 2);
  EXPECT_EQ(e.max_np, 8);
  EXPECT_EQ(e.discovery_script, command);
  EXPECT_EQ(e.slots_per_host, 3);
  EXPECT_EQ(e.timeout, std::chrono::seconds(120));
  EXPECT_EQ(e.reset_limit, 5);
  EXPECT_EQ(e.blacklist_cooldown, std::make_pair(1.5, 30.0));
  EXPECT_EQ(e.discovery_interval, std::chrono::milliseconds(1000));
}

TEST(CliElasticTest, DefaultsWhenOnlyTheScriptIsGiven) {
  DiscoveryScript script;
  CliResult r = parse({"-np", "3", "--host-discovery-script", script.path, "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  const ElasticOptions& e = r.options.elastic;
  EXPECT_TRUE(e.enabled);
  EXPECT_EQ(e.min_np, 3);  // -np
  EXPECT_FALSE(e.max_np.has_value());
  EXPECT_EQ(e.discovery_script, script.path);
  EXPECT_EQ(e.slots_per_host, 1);
  EXPECT_EQ(e.timeout, std::chrono::seconds(600));
  EXPECT_FALSE(e.reset_limit.has_value());
  EXPECT_FALSE(e.blacklist_cooldown.has_value());
}

TEST(CliElasticTest, NpDefaultsToMinNp) {
  CliResult r = parse({"--min-np", "2", "--host-discovery-script", "discover-hosts", "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.np, 2);
  EXPECT_EQ(r.options.elastic.min_np, 2);
  expect_error({"--max-np", "4", "--host-discovery-script", "discover-hosts", "prog"},
               "elastic mode needs -np or --min-np");
}

TEST(CliElasticTest, EachSwitchTurnsElasticModeOn) {
  for (const char* flag : {"--min-np", "--min-num-proc"}) {
    CliResult r = parse({"-np", "2", flag, "2", "-H", "a:2", "prog"});
    ASSERT_EQ(r.action, CliResult::Action::kLaunch) << flag << ": " << r.error;
    EXPECT_TRUE(r.options.elastic.enabled) << flag;
  }
  CliResult r = parse({"-np", "2", "--host-discovery-script", "discover-hosts", "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_TRUE(r.options.elastic.enabled);
}

TEST(CliElasticTest, FixedHostsFromHostListOrHostfile) {
  CliResult r = parse({"-np", "3", "--min-np", "2", "--max-np", "4", "-H", "a:2,b:2", "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.hosts, (std::vector<HostSlots>{{"a", 2}, {"b", 2}}));
  EXPECT_EQ(r.options.elastic.discovery_script, "");
  EXPECT_EQ(r.options.elastic.min_np, 2);
  EXPECT_EQ(r.options.elastic.max_np, 4);

  std::string path = temp_file("elastic-hosts", "n1 slots=2\nn2 slots=1\n");
  r = parse({"--min-np", "3", "--hostfile", path, "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.np, 3);
  EXPECT_EQ(r.options.hosts, (std::vector<HostSlots>{{"n1", 2}, {"n2", 1}}));
  std::remove(path.c_str());
}

TEST(CliElasticTest, FixedHostsMustHoldTheRanks) {
  expect_error({"--min-np", "5", "-H", "a:2,b:2", "prog"}, "--min-np 5 is more than the 4 slots");
  expect_error({"-np", "5", "--min-np", "2", "-H", "a:2,b:2", "prog"},
               "-np 5 is more than the 4 slots");
  // --max-np above the slots is only a ceiling.
  CliResult r = parse({"-np", "4", "--min-np", "2", "--max-np", "16", "-H", "a:2,b:2", "prog"});
  EXPECT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
}

TEST(CliElasticTest, NeedsSomeHosts) {
  expect_error({"-np", "2", "--min-np", "1", "prog"},
               "elastic mode needs --host-discovery-script, -H or --hostfile");
}

TEST(CliElasticTest, ScriptExcludesFixedHosts) {
  expect_error({"-np", "2", "--host-discovery-script", "discover-hosts", "-H", "a:2", "prog"},
               "--host-discovery-script finds the hosts itself: leave out -H and --hostfile");
  std::string path = temp_file("elastic-excl", "a slots=2\n");
  expect_error(
      {"-np", "2", "--hostfile", path, "--host-discovery-script", "discover-hosts", "prog"},
      "leave out -H and --hostfile");
  std::remove(path.c_str());
}

TEST(CliElasticTest, SizesMustBeOrdered) {
  expect_error({"-np", "2", "--min-np", "0", "-H", "a:4", "prog"},
               "--min-np must be at least 1, not 0");
  expect_error({"--min-np", "-1", "-H", "a:4", "prog"}, "--min-np must be at least 1, not -1");
  expect_error({"-np", "0", "--min-np", "1", "-H", "a:4", "prog"}, "-np must be at least 1, not 0");
  expect_error({"-np", "2", "--min-np", "3", "-H", "a:4", "prog"}, "--min-np 3 is more than -np 2");
  expect_error({"-np", "3", "--min-np", "1", "--max-np", "2", "-H", "a:4", "prog"},
               "--max-np 2 is less than -np 3");
  expect_error({"--min-np", "3", "--max-np", "2", "-H", "a:4", "prog"},
               "--max-np 2 is less than --min-np 3");
  CliResult r = parse({"-np", "2", "--min-np", "2", "--max-np", "2", "-H", "a:4", "prog"});
  EXPECT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
}

// horovodrun ignores them outside elastic mode; kolorun does too, saying so.
TEST(CliElasticTest, TuningFlagsOutsideElasticModeAreIgnoredWithAWarning) {
  const std::string kIgnored =
      " applies only to elastic jobs (--min-np or --host-discovery-script); ignored";
  const std::vector<std::vector<std::string>> flags = {{"--max-np", "4"},
                                                       {"--slots-per-host", "2"},
                                                       {"--elastic-timeout", "60"},
                                                       {"--reset-limit", "3"},
                                                       {"--blacklist-cooldown-range", "1", "5"}};
  for (const auto& flag : flags) {
    std::vector<std::string> args = {"-np", "2"};
    args.insert(args.end(), flag.begin(), flag.end());
    args.push_back("prog");
    CliResult r = parse(args);
    ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
    EXPECT_FALSE(r.options.elastic.enabled);
    EXPECT_EQ(r.warnings, std::vector<std::string>{flag[0] + kIgnored});
  }
}

TEST(CliElasticTest, TuningFlagsAreChecked) {
  const std::vector<std::string> base = {"-np", "2", "--host-discovery-script", "discover-hosts"};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("prog");
    return args;
  };
  expect_error(with({"--slots-per-host", "0"}), "--slots-per-host must be at least 1, not 0");
  expect_error(with({"--elastic-timeout", "0"}),
               "--elastic-timeout must be at least 1 second, not 0");
  expect_error(with({"--reset-limit", "-1"}), "--reset-limit must be 0 or more, not -1");
  expect_error(with({"--blacklist-cooldown-range", "-1", "5"}),
               "--blacklist-cooldown-range -1 5: needs seconds MIN MAX with 0 <= MIN <= MAX");
  expect_error(with({"--blacklist-cooldown-range", "5", "1"}), "--blacklist-cooldown-range 5 1:");
  expect_error(with({"--blacklist-cooldown-range", "1", "inf"}),
               "--blacklist-cooldown-range 1 inf:");
  expect_error(with({"--blacklist-cooldown-range", "nan", "1"}),
               "--blacklist-cooldown-range nan 1:");
  expect_error(with({"--slots-per-host", "many"}), "--slots-per-host");
  // Zero is a real limit and a real cooldown.
  CliResult r = parse(with({"--reset-limit", "0", "--blacklist-cooldown-range", "0", "0"}));
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.elastic.reset_limit, 0);
  EXPECT_EQ(r.options.elastic.blacklist_cooldown, std::make_pair(0.0, 0.0));
}

TEST(CliElasticTest, CooldownRangeTakesExactlyTwoValues) {
  CliResult r = parse({"--min-np", "1", "-H", "a:2", "--blacklist-cooldown-range", "1", "5",
                       "python", "x.py", "--blacklist-cooldown-range", "7"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.elastic.blacklist_cooldown, std::make_pair(1.0, 5.0));
  EXPECT_EQ(r.options.command,
            (std::vector<std::string>{"python", "x.py", "--blacklist-cooldown-range", "7"}));
  // The first value may follow '='; the second is the next argument.
  r = parse({"--min-np", "1", "-H", "a:2", "--blacklist-cooldown-range=2", "9", "prog"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.elastic.blacklist_cooldown, std::make_pair(2.0, 9.0));
  EXPECT_EQ(r.options.command, (std::vector<std::string>{"prog"}));
  // One value before the program: the program is taken as the second, and rejected.
  expect_error({"--min-np", "1", "-H", "a:2", "--blacklist-cooldown-range", "1", "prog"},
               "--blacklist-cooldown-range");
}

TEST(CliElasticTest, EqualsFormAndCommandUntouched) {
  DiscoveryScript script;
  CliResult r =
      parse({"-np=4", "--min-np=2", "--max-np=6", "--host-discovery-script=" + script.path,
             "--slots-per-host=2", "--elastic-timeout=30", "--reset-limit=1", "python", "train.py",
             "--min-np", "9", "-np", "1"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  const ElasticOptions& e = r.options.elastic;
  EXPECT_EQ(r.options.np, 4);
  EXPECT_EQ(e.min_np, 2);
  EXPECT_EQ(e.max_np, 6);
  EXPECT_EQ(e.discovery_script, script.path);
  EXPECT_EQ(e.slots_per_host, 2);
  EXPECT_EQ(e.timeout, std::chrono::seconds(30));
  EXPECT_EQ(e.reset_limit, 1);
  EXPECT_EQ(r.options.command,
            (std::vector<std::string>{"python", "train.py", "--min-np", "9", "-np", "1"}));

  r = parse({"-np", "2", "--min-np", "1", "-H", "a:2", "python", "train.py", "--epochs", "3"});
  ASSERT_EQ(r.action, CliResult::Action::kLaunch) << r.error;
  EXPECT_EQ(r.options.command, (std::vector<std::string>{"python", "train.py", "--epochs", "3"}));
}

TEST(CliElasticTest, DiscoveryScriptPathIsChecked) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string good = dir.write("discover.sh", "#!/bin/sh\necho a:2\n", 0755);
  const std::string plain = dir.write("plain.sh", "#!/bin/sh\necho a:2\n", 0644);
  const std::string missing = dir.path() + "/disocver.sh";
  auto with_script = [](const std::string& script) {
    return std::vector<std::string>{"-np", "2", "--host-discovery-script", script, "prog"};
  };
  EXPECT_EQ(parse(with_script(good)).action, CliResult::Action::kLaunch);
  EXPECT_EQ(parse(with_script(good + " --all")).action, CliResult::Action::kLaunch);
  expect_error(with_script(missing), missing + " does not exist");
  expect_error(with_script(missing + " --all"), "--host-discovery-script '" + missing + " --all'");
  expect_error(with_script(plain), plain + " is not an executable file");
  expect_error(with_script(dir.path()), dir.path() + " is not an executable file");
  expect_error(with_script(""), "--host-discovery-script is empty");
  expect_error(with_script("   "), "--host-discovery-script is empty");
  // Not plain paths: looked up in PATH or expanded by the shell, so left to run time.
  for (const std::string& script :
       {std::string("discover-hosts --all"), std::string("sh ") + missing,
        std::string("~/discover.sh"), std::string("$HOME/discover.sh"),
        std::string("\"") + missing + "\""})
    EXPECT_EQ(parse(with_script(script)).action, CliResult::Action::kLaunch) << script;
}

TEST(CliElasticTest, HelpListsTheElasticFlags) {
  CliResult help = parse({"--help"});
  ASSERT_EQ(help.exit_code, 0);
  for (const char* flag :
       {"Elastic", "--min-np", "--max-np", "--host-discovery-script", "--slots-per-host",
        "--elastic-timeout", "--reset-limit", "--blacklist-cooldown-range"})
    EXPECT_NE(help.output.find(flag), std::string::npos) << flag;
}

}  // namespace
}  // namespace kolo::runner
