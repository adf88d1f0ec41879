#include "runner/launcher.h"

#include <fmt/format.h>

#include "runner/elastic/elastic_driver.h"
#include "runner/launch_context.h"
#include "runner/mpi_launch.h"
#include "runner/output_mux.h"
#include "runner/signal_capture.h"

namespace kolo::runner {

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
  return job.run();
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
