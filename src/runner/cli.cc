#include "runner/cli.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstring>
#include <sstream>
#include <utility>

#include "common/error.h"
#include "common/untrusted_text.h"
#include "runner/cli_app.h"
#include "runner/cli_launcher.h"
#include "runner/option_spelling.h"
#include "runner/rank_env.h"
#include "runner/rank_layout.h"
#include "runner/setting_flags.h"

namespace kolo::runner {
namespace {

// The most ranks kolorun starts on this host when no host is named.
constexpr long kImplicitLocalRanksPerCpu = 8;
constexpr long kMinImplicitLocalRanks = 64;

bool given(const CLI::App& app, const char* name) {
  return app.get_option(name)->count() > 0;
}

// kolorun's long ("--") and one-letter option names, for abbreviations.
void option_names(const CLI::App& app, std::vector<std::string>* long_names,
                  std::vector<std::string>* short_names) {
  for (const CLI::Option* opt : app.get_options()) {
    for (const std::string& name : opt->get_lnames()) long_names->push_back("--" + name);
    for (const std::string& name : opt->get_snames()) short_names->push_back("-" + name);
  }
}

// Splits kolorun's own flags from the command: the command starts at the
// first argument that is neither an option nor an option's value. Most
// options take one value; --blacklist-cooldown-range takes two, and
// "--opt=1 5" has its first value inline.
void split_command(const CLI::App& app, const std::vector<std::string>& args,
                   std::vector<std::string>* own, std::vector<std::string>* command) {
  std::vector<std::string> long_names, short_names;
  option_names(app, &long_names, &short_names);
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i] == "--") {
      command->assign(args.begin() + static_cast<std::ptrdiff_t>(i) + 1, args.end());
      return;
    }
    if (args[i].size() < 2 || args[i][0] != '-') {
      command->assign(args.begin() + static_cast<std::ptrdiff_t>(i), args.end());
      return;
    }
    std::string arg = canonical_option(args[i], long_names, short_names);
    const std::string name = arg.substr(0, arg.find('='));
    const CLI::Option* opt = app.get_option_no_throw(name);
    int values = opt == nullptr ? 0 : opt->get_items_expected_min();
    if (arg.find('=') != std::string::npos) --values;
    // A value that starts with '-' (--mpi-args "--tag-output") would look
    // like an option to CLI11; written inline it cannot.
    if (values == 1 && name.rfind("--", 0) == 0 && i + 1 < args.size() &&
        args[i + 1].rfind("-", 0) == 0) {
      own->push_back(arg + "=" + args[++i]);
      continue;
    }
    own->push_back(arg);
    for (; values > 0 && i + 1 < args.size(); --values) own->push_back(args[++i]);
  }
}

bool variable_name(const std::string& name) {
  if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
  for (char c : name)
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '_') return false;
  return true;
}

Environment resolve_exports(const std::vector<std::string>& exports, const Environment& env) {
  Environment out;
  for (const auto& x : exports) {
    const size_t eq = x.find('=');
    const std::string name = x.substr(0, eq);
    if (!variable_name(name))
      throw InvalidArgument(fmt::format("-x '{}': '{}' is not a variable name", x, name));
    if (eq != std::string::npos) {
      out[name] = x.substr(eq + 1);
    } else if (auto it = env.find(name); it != env.end()) {
      out[name] = it->second;
    } else {
      throw InvalidArgument(fmt::format(
          "-x {}: {} is not set in kolorun's environment (use -x {}=value)", x, name, name));
    }
  }
  return out;
}

// The settings the ranks get from the file and the flags (flags win), and a
// check of everything the ranks will read, made as they will make it.
void resolve_settings(const CLI::App& app, RawFlags& f, const ConfigFile& file,
                      const Environment& env, CliResult& result) {
  LaunchOptions& o = result.options;
  o.settings = file.settings;
  for (auto& [name, value] : f.settings.given(app)) o.settings[name] = value;
  o.extra_env = resolve_exports(f.exports, env);
  Environment ranks_see = forwardable_environment(env);
  for (const auto& [name, value] : o.settings) ranks_see[name] = value;
  for (const auto& [name, value] : o.extra_env) ranks_see[name] = value;
  check_rank_settings(ranks_see);
  // ssh gets as long to connect as the ranks get to meet (whole seconds).
  if (const std::string timeout = o.setting("KOLO_START_TIMEOUT"); !timeout.empty())
    o.ssh.connect_timeout =
        std::chrono::seconds(static_cast<int64_t>(std::ceil(std::stod(timeout))));
  HorovodOnlyRequests requests = file.horovod_only;
  requests.overlay(f.horovod_only);
  for (std::string& w : check_horovod_only(requests)) result.warnings.push_back(std::move(w));
}

// -H or --hostfile as given; empty when neither is.
std::vector<HostSlots> fixed_hosts(const CLI::App& app, const RawFlags& f) {
  if (given(app, "--hostfile")) return read_hostfile(f.hostfile);
  // Given but empty (-H "") is a mistake, not "no hosts given".
  if (given(app, "--hosts")) return parse_host_list(f.hosts);
  return {};
}

// Without -H or --hostfile, -np ranks run on this host (horovodrun's
// localhost:np). An -np far beyond what the host could run is a typo (an
// extra zero), not a job: it would fork until the system refuses. Asking
// for localhost:N with -H says it is meant.
void check_implicit_local_ranks(int np) {
  const long cpus = ::sysconf(_SC_NPROCESSORS_ONLN);
  const int limit = static_cast<int>(
      std::max<long>(kMinImplicitLocalRanks, kImplicitLocalRanksPerCpu * std::max(cpus, 1L)));
  if (np > limit)
    throw InvalidArgument(fmt::format(
        "-np {} without -H or --hostfile would start {} ranks on this host, which has {} CPUs; "
        "at most {} are started that way ({} per CPU, at least {}): name the host "
        "(-H localhost:N) to start more",
        np, np, cpus, limit, kImplicitLocalRanksPerCpu, kMinImplicitLocalRanks));
}

// A job of exactly -np ranks on fixed hosts (localhost by default).
void resolve_fixed(const CLI::App& app, const RawFlags& f, CliResult& result) {
  LaunchOptions& o = result.options;
  // horovodrun ignores them outside elastic mode; so does kolorun, saying so.
  for (const char* name : kElasticOnly)
    if (given(app, name))
      result.warnings.push_back(fmt::format(
          "{} applies only to elastic jobs (--min-np or --host-discovery-script); ignored", name));
  if (!given(app, "--num-proc")) throw InvalidArgument("-np is required (the number of ranks)");
  o.np = f.np;
  if (o.np < 1) throw InvalidArgument(fmt::format("-np must be at least 1, not {}", o.np));
  o.hosts = fixed_hosts(app, f);
  if (o.hosts.empty()) {
    check_implicit_local_ranks(o.np);
    o.hosts = {{"localhost", o.np}};
  }
  assign_ranks(o.hosts, o.np);  // checks -np against the slots now, before anything starts
}

bool elastic_mode(const CLI::App& app) {
  return std::any_of(std::begin(kElasticSwitches), std::end(kElasticSwitches),
                     [&](const char* name) { return given(app, name); });
}

// -np is where the job starts; it may shrink to --min-np and grow to
// --max-np. Without -np the job starts at --min-np.
void resolve_elastic_sizes(const CLI::App& app, const RawFlags& f, LaunchOptions& o) {
  const bool np_given = given(app, "--num-proc"), min_given = given(app, "--min-np");
  if (!np_given && !min_given)
    throw InvalidArgument("elastic mode needs -np or --min-np (the number of ranks to start with)");
  if (min_given && f.min_np < 1)
    throw InvalidArgument(fmt::format("--min-np must be at least 1, not {}", f.min_np));
  o.np = np_given ? f.np : f.min_np;
  if (o.np < 1) throw InvalidArgument(fmt::format("-np must be at least 1, not {}", o.np));
  ElasticOptions& e = o.elastic;
  e.min_np = min_given ? f.min_np : o.np;
  if (e.min_np > o.np)
    throw InvalidArgument(fmt::format("--min-np {} is more than -np {}", e.min_np, o.np));
  if (given(app, "--max-np")) {
    if (f.max_np < o.np)
      throw InvalidArgument(fmt::format("--max-np {} is less than {} {}", f.max_np,
                                        np_given ? "-np" : "--min-np", o.np));
    e.max_np = f.max_np;
  }
}

// The tuning flags, each checked on its own.
void resolve_elastic_limits(const CLI::App& app, const RawFlags& f, ElasticOptions& e) {
  if (f.slots_per_host < 1)
    throw InvalidArgument(
        fmt::format("--slots-per-host must be at least 1, not {}", f.slots_per_host));
  e.slots_per_host = f.slots_per_host;
  if (f.elastic_timeout < 1)
    throw InvalidArgument(
        fmt::format("--elastic-timeout must be at least 1 second, not {}", f.elastic_timeout));
  e.timeout = std::chrono::seconds(f.elastic_timeout);
  if (given(app, "--reset-limit")) {
    if (f.reset_limit < 0)
      throw InvalidArgument(fmt::format("--reset-limit must be 0 or more, not {}", f.reset_limit));
    e.reset_limit = f.reset_limit;
  }
  if (given(app, "--blacklist-cooldown-range")) {
    const auto [low, high] = f.cooldown;
    if (!std::isfinite(low) || !std::isfinite(high) || low < 0 || low > high)
      throw InvalidArgument(fmt::format(
          "--blacklist-cooldown-range {} {}: needs seconds MIN MAX with 0 <= MIN <= MAX", low,
          high));
    e.blacklist_cooldown = f.cooldown;
  }
}

// A mistyped script path would otherwise show only as "no hosts" once the
// job waits for them; a path is checked now. A first word without '/' is
// looked up in PATH, and one with shell expansions means something only to
// the shell: both are left to run time.
void check_discovery_script(const std::string& script) {
  std::istringstream words(script);
  std::string program;
  if (!(words >> program))
    throw InvalidArgument(
        "--host-discovery-script is empty: give the command that lists the hosts");
  if (program.find('/') == std::string::npos ||
      program.find_first_of("~$`'\"\\*?[{=") != std::string::npos)
    return;
  struct stat st {};
  if (::stat(program.c_str(), &st) != 0)
    throw InvalidArgument(
        fmt::format("--host-discovery-script '{}': {} does not exist", script, program));
  if (!S_ISREG(st.st_mode) || ::access(program.c_str(), X_OK) != 0)
    throw InvalidArgument(
        fmt::format("--host-discovery-script '{}': {} is not an executable file", script, program));
}

// Hosts come from the script at run time (o.hosts stays empty), or are the
// fixed -H/--hostfile hosts (the job outlives failed hosts while --min-np
// ranks still fit). Fixed hosts must hold --min-np and -np ranks now.
void resolve_elastic_hosts(const CLI::App& app, const RawFlags& f, LaunchOptions& o) {
  const bool fixed_given = given(app, "--hosts") || given(app, "--hostfile");
  if (given(app, "--host-discovery-script")) {
    if (fixed_given)
      throw InvalidArgument(
          "--host-discovery-script finds the hosts itself: leave out -H and --hostfile");
    check_discovery_script(f.discovery_script);
    o.elastic.discovery_script = f.discovery_script;
    return;
  }
  o.hosts = fixed_hosts(app, f);
  if (o.hosts.empty())
    throw InvalidArgument("elastic mode needs --host-discovery-script, -H or --hostfile");
  int64_t slots = 0;  // a hostfile may list many hosts of many slots
  for (const HostSlots& h : o.hosts) slots += h.slots;
  if (o.elastic.min_np > slots)
    throw InvalidArgument(
        fmt::format("--min-np {} is more than the {} slots of the hosts", o.elastic.min_np, slots));
  assign_ranks(o.hosts, o.np);
}

void resolve_elastic(const CLI::App& app, const RawFlags& f, LaunchOptions& o) {
  o.elastic.enabled = true;
  resolve_elastic_sizes(app, f, o);
  resolve_elastic_limits(app, f, o.elastic);
  resolve_elastic_hosts(app, f, o);
}

CliResult exit_with(int code, std::string output, std::string error) {
  CliResult r;
  r.action = CliResult::Action::kExit;
  r.exit_code = code;
  r.output = std::move(output);
  r.error = std::move(error);
  return r;
}

}  // namespace

CliResult parse_command_line(const std::vector<std::string>& args, const Environment& env) {
  CLI::App app{"kolorun: start a Kolo job of N ranks on this host or across hosts over ssh.",
               "kolorun"};
  RawFlags f;
  CliResult result;
  LaunchOptions& o = result.options;
  build_app(app, f, o.ssh);

  std::vector<std::string> own;
  try {
    split_command(app, args, &own, &o.command);
  } catch (const InvalidArgument& e) {  // an ambiguous abbreviation, as argparse says it
    return exit_with(2, "", fmt::format("kolorun: {}\n", e.what()));
  }
  std::reverse(own.begin(), own.end());  // CLI11 takes the vector reversed
  try {
    app.parse(own);
  } catch (const CLI::ParseError& e) {
    std::ostringstream out, err;
    int code = app.exit(e, out, err);
    if (code == 0) return exit_with(0, out.str(), err.str());  // --help, --version
    // One line, like every other refusal, instead of CLI11's two.
    return exit_with(2, "",
                     fmt::format("kolorun: {} (kolorun --help lists the options)\n",
                                 untrusted_text(e.what(), 300)));
  }

  try {
    if (f.check_build) {
      result.action = CliResult::Action::kCheckBuild;
      return result;
    }
    if (o.command.empty())
      throw InvalidArgument("no program given: kolorun -np N [options] program [args...]");
    const bool elastic = elastic_mode(app);
    if (elastic)
      resolve_elastic(app, f, o);
    else
      resolve_fixed(app, f, result);

    const ConfigFile file = f.config_file.empty() ? ConfigFile{} : load_config_file(f.config_file);
    resolve_settings(app, f, file, env, result);
    if (app.get_option("--ssh-port")->count() > 0) o.ssh.port = f.ssh_port;
    o.output.timestamps = f.timestamps;
    o.output.directory = f.output_dir;
    o.verbose = f.verbose;
    resolve_launcher(app, f, file.controller, elastic, env, result);
    result.action = CliResult::Action::kLaunch;
    return result;
  } catch (const InvalidArgument& e) {
    CliResult r = exit_with(2, "", fmt::format("kolorun: {}\n", e.what()));
    r.warnings = result.warnings;
    return r;
  }
}

}  // namespace kolo::runner
