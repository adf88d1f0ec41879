#include "runner/launcher.h"

#include <fmt/format.h>

#include "common/error.h"
#include "common/settings/values.h"
#include "rendezvous/failure_report.h"
#include "rendezvous/tcp_store_client.h"
#include "runner/elastic/elastic_driver.h"
#include "runner/launch_context.h"
#include "runner/mpi_launch.h"
#include "runner/output_mux.h"
#include "runner/signal_capture.h"

namespace kolo::runner {
namespace {

// The first rank to exit with an error is often a healthy one that reacted
// to the failure (a frozen rank does not exit at all; kolorun kills it last).
// When the ranks reported a cause, the last line names it. A rank killed by
// a signal nobody sent is a cause of its own, and stays named.
// The scope of the job's keys, as the ranks read it (rank_env.h gives them
// kolorun's environment, the settings of flags and file, and -x).
std::string rank_key_prefix(const LaunchOptions& options) {
  return settings::read_one(
      "KOLO_RENDEZVOUS_PREFIX", [&](std::string_view name) -> std::optional<std::string> {
        const std::string key(name);
        if (std::string given = options.setting(key); !given.empty()) return given;
        if (auto it = options.extra_env.find(key); it != options.extra_env.end()) return it->second;
        return settings::from_environment(name);
      });
}

void name_reported_cause(JobResult& result, const LaunchOptions& options,
                         const LaunchContext& context) {
  if (result.exit_code != 1 || result.first_failure < 0 || result.timed_out ||
      result.interrupted_by != 0)
    return;
  const auto& status = result.ranks.at(static_cast<size_t>(result.first_failure));
  if (!status || status->signal != 0) return;
  std::optional<std::string> report;
  try {
    rendezvous::TcpStoreClientOptions client;
    client.host = "127.0.0.1";
    client.port = static_cast<uint16_t>(context.rendezvous().port);
    client.secret = context.rendezvous().secret;
    client.connect_timeout = std::chrono::seconds(2);
    client.io_timeout = std::chrono::seconds(2);
    rendezvous::TcpStoreClient store(client);
    report = rendezvous::reported_failure(store, rank_key_prefix(options));
  } catch (const Error&) {
    return;  // the rank's exit is all there is to say
  }
  if (!report) return;
  const std::string prefix = "job failed: ";
  std::string first = result.message;
  if (first.rfind(prefix, 0) == 0) first.erase(0, prefix.size());
  result.message = fmt::format("{}{}; the first to exit was {}", prefix, *report, first);
}

}  // namespace

JobResult launch(const LaunchOptions& options, int stdout_fd, int stderr_fd) {
  if (options.elastic.enabled) return elastic::run_elastic(options, stdout_fd, stderr_fd);
  if (options.mpi.enabled) return launch_with_mpirun(options, stdout_fd, stderr_fd);
  const std::vector<RankSlot> slots = assign_ranks(options.hosts, options.np);
  std::vector<std::string> hosts;
  for (const auto& s : slots) hosts.push_back(s.host);

  // Signals are captured before the store's thread starts, so it inherits the mask.
  SignalCapture signals;
  LaunchContext context(options, hosts, /*any_remote_later=*/false);
  std::vector<RankLaunch> ranks;
  for (const auto& slot : slots) ranks.push_back(context.make(slot, slot.rank));

  if (options.verbose) {
    auto say = [&](const std::string& line) { write_fully(stderr_fd, "kolorun: " + line + "\n"); };
    say(fmt::format("{} ranks; rendezvous store at {}:{} (listening on {})", slots.size(),
                    context.rendezvous().address, context.rendezvous().port,
                    context.bind_address()));
    for (const auto& r : ranks)
      say(fmt::format("rank {}: host {} local_rank {}/{} cross_rank {}/{} via {}", r.slot.rank,
                      r.slot.host, r.slot.local_rank, r.slot.local_size, r.slot.cross_rank,
                      r.slot.cross_size,
                      r.remote ? fmt::format("ssh: {}", fmt::join(r.spawn.argv, " "))
                               : std::string("fork/exec")));
  }

  Job job(std::move(ranks), job_options(options, stdout_fd, stderr_fd, signals.fd()));
  JobResult result = job.run();
  name_reported_cause(result, options, context);
  return result;
}

JobOptions job_options(const LaunchOptions& options, int stdout_fd, int stderr_fd, int signal_fd) {
  JobOptions job_options;
  job_options.output = options.output;
  job_options.stdout_fd = stdout_fd;
  job_options.stderr_fd = stderr_fd;
  job_options.signal_fd = signal_fd;
  job_options.kill_grace = options.kill_grace;
  job_options.job_timeout = options.job_timeout;
  job_options.verbose = options.verbose;
  return job_options;
}

JobResult launch_local(int np, std::vector<std::string> command,
                       std::chrono::milliseconds job_timeout) {
  LaunchOptions options;
  options.np = np;
  options.hosts = {{"localhost", np}};
  options.command = std::move(command);
  options.output.tagged = false;
  options.job_timeout = job_timeout;
  return launch(options);
}

}  // namespace kolo::runner
