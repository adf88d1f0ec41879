#include "runner/cli_app.h"

#ifndef KOLO_VERSION_STRING
#define KOLO_VERSION_STRING "unknown"
#endif

namespace kolo::runner {
namespace {

// Their own help group, so --help shows at a glance what elastic mode adds.
void add_elastic_flags(CLI::App& app, RawFlags& f) {
  const std::string group = "Elastic (--min-np or --host-discovery-script)";
  app.add_option("--min-np,--min-num-proc", f.min_np,
                 "fewest ranks the job goes on with (default: -np)")
      ->group(group);
  app.add_option("--max-np,--max-num-proc", f.max_np,
                 "most ranks the job grows to (default: every slot)")
      ->group(group);
  app.add_option("--host-discovery-script", f.discovery_script,
                 "prints 'host' or 'host:slots' per line; run with /bin/sh -c every second")
      ->type_name("SCRIPT")
      ->group(group);
  app.add_option("--slots-per-host", f.slots_per_host,
                 "slots of a discovered host printed without ':slots' (default 1)")
      ->group(group);
  app.add_option("--elastic-timeout", f.elastic_timeout,
                 "seconds to wait for enough hosts for --min-np ranks (default 600)")
      ->type_name("SECONDS")
      ->group(group);
  app.add_option("--reset-limit", f.reset_limit,
                 "most times the job may be resized or restarted (default: no limit)")
      ->group(group);
  app.add_option("--blacklist-cooldown-range", f.cooldown,
                 "a failed host is left out MIN to MAX seconds (default: for good)")
      ->type_name("MIN MAX")
      ->group(group);
}

// horovodrun's controller flags: which program starts the ranks.
void add_launcher_flags(CLI::App& app, RawFlags& f) {
  const std::string group = "Launcher (horovodrun's controller)";
  auto* gloo =
      app.add_flag("--gloo", f.use_gloo, "start the ranks with kolorun itself (the default)")
          ->group(group);
  auto* mpi =
      app.add_flag("--mpi", f.use_mpi, "start the ranks with the system's mpirun")->group(group);
  auto* jsrun =
      app.add_flag("--jsrun", f.use_jsrun, "start the ranks with IBM's jsrun (not supported)")
          ->group(group);
  gloo->excludes(mpi)->excludes(jsrun);
  mpi->excludes(jsrun);
  app.add_option("--mpi-args", f.mpi_args,
                 "extra mpirun arguments, split like a shell; alone they mean --mpi")
      ->type_name("ARGS")
      ->group(group);
  app.add_option("--binding-args", f.binding_args,
                 "mpirun's binding arguments (default: --bind-to none --map-by slot)")
      ->type_name("ARGS")
      ->group(group);
  // Kolo keeps no cache of ssh checks, and its data plane is TCP already.
  app.add_flag("--disable-cache", f.disable_cache, "accepted; Kolo caches no ssh checks")
      ->group(group);
  app.add_flag("--tcp", f.tcp, "accepted; Kolo's connections are TCP already")->group(group);
}

// A horovodrun pair of switches (--x / --no-x) for a feature Kolo lacks.
void add_switch_pair(CLI::App& app, const std::string& on, const std::string& off,
                     std::optional<bool>& target, const std::string& help,
                     const std::string& group) {
  auto* yes = app.add_flag_callback(
                     on, [&target] { target = true; }, help)
                  ->group(group);
  auto* no = app.add_flag_callback(
                    off, [&target] { target = false; }, "the opposite of " + on)
                 ->group(group);
  yes->excludes(no);
}

template <typename T>
void add_optional(CLI::App& app, const std::string& name, std::optional<T>& target,
                  const std::string& help, const std::string& group) {
  app.add_option_function<T>(
         name, [&target](const T& value) { target = value; }, help)
      ->group(group);
}

void add_horovod_only_flags(CLI::App& app, HorovodOnlyRequests& r) {
  const std::string group = "horovodrun features Kolo lacks (accepted; see the user guide)";
  add_switch_pair(app, "--torus-allreduce", "--no-torus-allreduce", r.torus_allreduce,
                  "warns: Kolo has no torus allreduce", group);
  add_switch_pair(app, "--mpi-threads-disable", "--no-mpi-threads-disable", r.mpi_threads_disable,
                  "no effect: Kolo's ranks use no MPI threads", group);
  add_optional(app, "--num-nccl-streams", r.num_nccl_streams, "warns above 1: Kolo has no NCCL",
               group);
  add_optional(app, "--thread-affinity", r.thread_affinity,
               "warns: Kolo does not pin its background thread", group);
}

}  // namespace

void build_app(CLI::App& app, RawFlags& f, SshOptions& ssh) {
  app.set_version_flag("-v,--version", "kolorun (Kolo) " KOLO_VERSION_STRING);
  app.add_option("--num-proc", f.np, "number of ranks (spelled -np too)");
  auto* hosts = app.add_option("-H,--hosts", f.hosts,
                               "hosts and slots: host1:4,host2:4 (default: localhost)");
  auto* hostfile = app.add_option("--hostfile", f.hostfile,
                                  "file of 'host slots=N' lines (spelled -hostfile too)");
  hosts->excludes(hostfile);
  app.add_option("-p,--ssh-port", f.ssh_port, "ssh port of the remote hosts")
      ->check(CLI::Range(1, 65535));
  app.add_option("-i,--ssh-identity-file", ssh.identity_file,
                 "ssh private key for the remote hosts");
  app.add_option("--ssh-host-key-checking", ssh.host_key_checking,
                 "ssh StrictHostKeyChecking: yes, accept-new or no")
      ->check(CLI::IsMember({"yes", "accept-new", "no"}));
  app.add_option("--ssh-known-hosts-file", ssh.known_hosts_file,
                 "ssh known_hosts file to check host keys against");
  app.add_option("--ssh-option", ssh.options, "extra ssh -o option, e.g. ProxyJump=gw (repeatable)")
      ->allow_extra_args(false);
  app.add_option("--output-filename", f.output_dir,
                 "also write each rank's output to DIR/rank.N/stdout and stderr");
  app.add_flag("--verbose", f.verbose, "print the rank layout and the commands run");
  app.add_flag("--prefix-output-with-timestamp", f.timestamps,
               "prefix every output line with the time (-prefix-timestamp)");
  app.add_option("--config-file", f.config_file,
                 "YAML file with horovodrun's sections; flags override it");
  f.settings.add_to(app);
  app.add_option("-x", f.exports,
                 "pass VAR (from this environment) or VAR=value to every rank (repeatable)")
      ->allow_extra_args(false);
  app.add_flag("--check-build", f.check_build,
               "list the backends, frameworks and features of this build (-cb)");
  add_launcher_flags(app, f);
  add_horovod_only_flags(app, f.horovod_only);
  add_elastic_flags(app, f);
  app.footer(
      "Usage: kolorun -np N [-H host1:n1,host2:n2 | --hostfile FILE] [options] program [args...]\n"
      "       kolorun [-np N] --min-np M [--max-np X] [--host-discovery-script CMD | -H ...]\n"
      "               [options] program [args...]     (elastic)\n"
      "Everything from the program on is passed to every rank unchanged.");
}

}  // namespace kolo::runner
