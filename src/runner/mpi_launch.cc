#include "runner/mpi_launch.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

#include "runner/launch_context.h"
#include "runner/launcher.h"
#include "runner/output_mux.h"
#include "runner/shell_words.h"
#include "runner/signal_capture.h"

namespace kolo::runner {
namespace {

// Layout variables a launcher above kolorun may have set; under mpirun each
// rank must find its own (OMPI_COMM_WORLD_*), not one copied to all.
constexpr const char* kLayoutNames[] = {"RANK",       "SIZE",       "LOCAL_RANK", "LOCAL_SIZE",
                                        "CROSS_RANK", "CROSS_SIZE", "HOSTNAME"};
constexpr const char* kRendezvousNames[] = {"KOLO_RENDEZVOUS_ADDR", "KOLO_RENDEZVOUS_PORT",
                                            "KOLO_SECRET"};
// What a program needs to be found and loaded on the other hosts as here.
constexpr const char* kSearchPaths[] = {"PATH", "LD_LIBRARY_PATH", "PYTHONPATH"};

bool has_word(const std::vector<std::string>& words, const std::string& word) {
  return std::find(words.begin(), words.end(), word) != words.end();
}

std::string host_list(const std::vector<HostSlots>& hosts) {
  std::vector<std::string> parts;
  for (const HostSlots& h : hosts) parts.push_back(fmt::format("{}:{}", h.host, h.slots));
  return fmt::format("{}", fmt::join(parts, ","));
}

// kolorun's ssh settings as mpirun's ssh arguments (plm_rsh_args, one
// string, split by mpirun at spaces): the port and key, and the host key
// policy and known-hosts file when they differ from ssh's defaults.
std::vector<std::string> rsh_args(const SshOptions& ssh) {
  std::vector<std::string> rsh;
  if (ssh.port) rsh.push_back(fmt::format("-p {}", *ssh.port));
  if (!ssh.identity_file.empty()) rsh.push_back("-i " + ssh.identity_file);
  for (const std::string& option : ssh.options) rsh.push_back("-o " + option);
  if (ssh.host_key_checking != SshOptions{}.host_key_checking)
    rsh.push_back("-o StrictHostKeyChecking=" + ssh.host_key_checking);
  if (!ssh.known_hosts_file.empty()) rsh.push_back("-o UserKnownHostsFile=" + ssh.known_hosts_file);
  return rsh;
}

}  // namespace

Environment mpirun_environment(const Environment& launcher_env, const LaunchOptions& options,
                               const RendezvousEndpoint& rendezvous) {
  Environment env = launcher_env;
  for (const char* prefix : {"KOLO_", "HOROVOD_"})
    for (const char* name : kLayoutNames) env.erase(std::string(prefix) + name);
  for (const auto& [k, v] : options.settings) env[k] = v;
  for (const auto& [k, v] : options.extra_env) env[k] = v;
  env["KOLO_RENDEZVOUS_ADDR"] = rendezvous.address;
  env["KOLO_RENDEZVOUS_PORT"] = std::to_string(rendezvous.port);
  env["KOLO_SECRET"] = rendezvous.secret;
  return env;
}

std::vector<std::string> mpirun_exported_names(const Environment& launcher_env,
                                               const LaunchOptions& options) {
  std::vector<std::string> names;
  for (const char* name : kSearchPaths)
    if (launcher_env.count(name)) names.push_back(name);
  for (const auto& entry : options.settings) names.push_back(entry.first);
  for (const auto& entry : options.extra_env) names.push_back(entry.first);
  for (const char* name : kRendezvousNames) names.push_back(name);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

std::vector<std::string> mpirun_command(const LaunchOptions& options,
                                        const std::vector<std::string>& exported, bool as_root) {
  const MpiOptions& mpi = options.mpi;
  std::vector<std::string> argv{mpi.mpirun};
  // As horovodrun does: root allowed, every line tagged with its rank.
  if (as_root && !has_word(mpi.extra_args, "--allow-run-as-root"))
    argv.push_back("--allow-run-as-root");
  if (!has_word(mpi.extra_args, "--tag-output")) argv.push_back("--tag-output");
  argv.insert(argv.end(), {"-np", std::to_string(options.np)});
  const std::vector<HostSlots> hosts =
      options.hosts.empty() ? std::vector<HostSlots>{{"localhost", options.np}} : options.hosts;
  argv.insert(argv.end(), {"-H", host_list(hosts)});
  if (mpi.binding_args.empty()) {
    argv.insert(argv.end(), {"--bind-to", "none", "--map-by", "slot"});
  } else {
    argv.insert(argv.end(), mpi.binding_args.begin(), mpi.binding_args.end());
  }
  const std::vector<std::string> rsh = rsh_args(options.ssh);
  if (!rsh.empty())
    argv.insert(argv.end(), {"--mca", "plm_rsh_args", fmt::format("{}", fmt::join(rsh, " "))});
  if (!mpi.network_interfaces.empty())
    argv.insert(argv.end(), {"--mca", "btl_tcp_if_include",
                             fmt::format("{}", fmt::join(mpi.network_interfaces, ","))});
  if (options.output.timestamps && !has_word(mpi.extra_args, "--timestamp-output"))
    argv.push_back("--timestamp-output");
  if (!options.output.directory.empty())
    argv.insert(argv.end(), {"--output-filename", options.output.directory});
  for (const auto& name : exported) argv.insert(argv.end(), {"-x", name});
  argv.insert(argv.end(), mpi.extra_args.begin(), mpi.extra_args.end());
  argv.insert(argv.end(), options.command.begin(), options.command.end());
  return argv;
}

JobResult launch_with_mpirun(const LaunchOptions& options, int stdout_fd, int stderr_fd) {
  std::vector<std::string> host_names;
  for (const HostSlots& h : options.hosts) host_names.push_back(h.host);
  // Signals are captured before the store's thread starts, so it inherits the mask.
  SignalCapture signals;
  LaunchContext context(options, host_names, /*any_remote_later=*/false);
  const Environment launcher_env = current_environment();

  RankLaunch mpirun;
  mpirun.slot.host = "localhost";
  mpirun.spawn.env = mpirun_environment(launcher_env, options, context.rendezvous());
  mpirun.spawn.argv =
      mpirun_command(options, mpirun_exported_names(launcher_env, options), ::geteuid() == 0);
  if (options.verbose)
    write_fully(stderr_fd, fmt::format("kolorun: {}\n", shell_quoted(mpirun.spawn.argv)));

  JobOptions job = job_options(options, stdout_fd, stderr_fd, signals.fd());
  job.output.tagged = false;  // mpirun tags and files the output itself
  job.output.directory.clear();
  job.output.timestamps = false;
  job.verbose = false;  // its notes would call mpirun "rank 0"
  std::vector<RankLaunch> launches;
  launches.push_back(std::move(mpirun));
  JobResult result = Job(std::move(launches), job).run();
  // mpirun's own exit code and words, not those of a rank 0 it stood for.
  if (!result.ranks.empty() && result.ranks[0] && result.interrupted_by == 0 && !result.timed_out) {
    const ExitStatus& status = *result.ranks[0];
    result.exit_code = status.signal ? 128 + status.signal : status.code;
    result.message = status.ok() ? "" : fmt::format("mpirun {}", status.describe());
  }
  return result;
}

}  // namespace kolo::runner
