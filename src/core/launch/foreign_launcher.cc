#include "core/launch/foreign_launcher.h"

#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <fstream>
#include <functional>
#include <sstream>
#include <vector>

#include "common/error.h"
#include "core/launch/openmpi_nodes.h"

namespace kolo::launch {
namespace {

// Reads the launcher's variables; every number is checked where it is read.
class Variables {
 public:
  explicit Variables(const settings::Lookup& env) : env_(env) {}

  std::optional<std::string> text(std::string_view name) const { return env_(name); }
  bool has(std::string_view name) const { return env_(name).has_value(); }

  int number(std::string_view name, int min) const {
    const auto value = env_(name);
    if (!value) throw InvalidArgument(fmt::format("{} is not set", name));
    int parsed = 0;
    const char* end = value->data() + value->size();
    const auto [ptr, ec] = std::from_chars(value->data(), end, parsed);
    if (ec != std::errc() || ptr != end || parsed < min)
      throw InvalidArgument(
          fmt::format("{}='{}' is not a whole number of at least {}", name, *value, min));
    return parsed;
  }

  std::optional<int> optional_number(std::string_view name, int min) const {
    if (!has(name)) return std::nullopt;
    return number(name, min);
  }

 private:
  const settings::Lookup& env_;
};

// The parent process and its start time: the same for every rank a launcher
// process forked on this host, and never reused while it runs.
std::string parent_process_key() {
  const pid_t parent = ::getppid();
  std::ifstream stat(fmt::format("/proc/{}/stat", parent));
  std::string line;
  std::getline(stat, line);
  // Field 22 (start time) counts from after the ")" that ends the name.
  std::istringstream fields(line.substr(line.rfind(')') + 1));
  std::string field;
  for (int i = 3; i <= 22 && fields >> field; ++i) {
  }
  return fmt::format("ppid{}-{}", parent, field);
}

// Local rank and size 0 mean the launcher does not say: the ranks find out
// by host once they meet (host_layout.h).
void check_ranks(ForeignLauncher& l) {
  if (l.rank >= l.size)
    throw InvalidArgument(
        fmt::format("{} says this is rank {} of {} processes", l.name, l.rank, l.size));
  if (l.local_size == 0) {
    l.local_rank = 0;
    return;
  }
  if (l.local_rank >= l.local_size || l.local_size > l.size)
    throw InvalidArgument(fmt::format("{} says this is local rank {} of {} on this host (of {})",
                                      l.name, l.local_rank, l.local_size, l.size));
}

// Where an MPI launcher puts a rank's place; each rank gets all of them.
struct MpiVariables {
  const char* name;
  const char* size;
  const char* rank;
  const char* local_size;
  const char* local_rank;
  const char* job_id;  // names the job; absent: the parent process does
  const char* key_prefix;
  // "<daemon name>;<its addresses>": the daemon that started the rank, one
  // per node; nullptr: the launcher names none.
  const char* node_daemon;
  // The job's nodes and their daemons (openmpi_nodes.h); nullptr: none.
  const char* node_list;
};

constexpr MpiVariables kOpenMpi = {"mpirun (OpenMPI)",
                                   "OMPI_COMM_WORLD_SIZE",
                                   "OMPI_COMM_WORLD_RANK",
                                   "OMPI_COMM_WORLD_LOCAL_SIZE",
                                   "OMPI_COMM_WORLD_LOCAL_RANK",
                                   "OMPI_MCA_ess_base_jobid",
                                   "ompi",
                                   "OMPI_MCA_orte_local_daemon_uri",
                                   "OMPI_MCA_orte_node_regex"};
// MPICH's Hydra (and Intel MPI, built on it): its proxy forks every rank of
// a host and names no job unless PMIx does.
constexpr MpiVariables kHydra = {"mpiexec (MPICH)", "PMI_SIZE",        "PMI_RANK",
                                 "MPI_LOCALNRANKS", "MPI_LOCALRANKID", "PMIX_NAMESPACE",
                                 "hydra",           nullptr,           nullptr};

std::optional<ForeignLauncher> mpi_launcher(const Variables& v, const MpiVariables& names) {
  if (!v.has(names.size) && !v.has(names.rank)) return std::nullopt;
  ForeignLauncher l;
  l.name = names.name;
  l.size = v.number(names.size, 1);
  l.rank = v.number(names.rank, 0);
  l.local_size = v.optional_number(names.local_size, 1).value_or(0);
  l.local_rank = v.optional_number(names.local_rank, 0).value_or(0);
  l.job_key = fmt::format(
      "{}-{}", names.key_prefix,
      v.text(names.job_id).value_or(v.text("PMIX_NAMESPACE").value_or(parent_process_key())));
  l.mpi_launched = true;
  if (names.node_daemon != nullptr) {
    if (auto daemon = v.text(names.node_daemon)) {
      l.node_key =
          fmt::format("{}-daemon-{}", names.key_prefix, daemon->substr(0, daemon->find(';')));
      if (auto nodes = v.text(names.node_list)) l.node_name = openmpi_node_name(*nodes, *daemon);
    }
  }
  return l;
}

// torchrun, and anything that sets torch.distributed's variables
// (Kubeflow's PyTorchJob sets RANK, WORLD_SIZE and MASTER_ADDR).
std::optional<ForeignLauncher> torch_distributed(const Variables& v) {
  if (!v.has("WORLD_SIZE") || !v.has("RANK") || !v.has("MASTER_ADDR")) return std::nullopt;
  ForeignLauncher l;
  const bool torchrun = v.has("TORCHELASTIC_RUN_ID");
  l.name = torchrun ? "torchrun" : "a torch.distributed launcher (RANK/WORLD_SIZE/MASTER_ADDR)";
  l.size = v.number("WORLD_SIZE", 1);
  l.rank = v.number("RANK", 0);
  l.local_size = v.optional_number("LOCAL_WORLD_SIZE", 1).value_or(0);
  l.local_rank = v.optional_number("LOCAL_RANK", 0).value_or(0);
  l.rank0_host = *v.text("MASTER_ADDR");
  if (auto port = v.optional_number("MASTER_PORT", 1)) l.port_hint = *port < 65535 ? *port + 1 : 0;
  // torchrun writes each attempt's error files under a directory of its
  // own: ".../<run>_<random>/attempt_<n>/<local rank>/error.json".
  if (auto error_file = v.text("TORCHELASTIC_ERROR_FILE")) {
    std::string dir = *error_file;
    for (int up = 0; up < 2 && dir.find('/') != std::string::npos; ++up) dir.erase(dir.rfind('/'));
    l.job_key = "torchrun-" + dir;
  } else {
    l.job_key = fmt::format("torch-{}-{}-{}", l.rank0_host, v.text("MASTER_PORT").value_or(""),
                            parent_process_key());
  }
  return l;
}

// "2(x3),1" -> {2, 2, 2, 1}: Slurm's tasks per node, compressed.
std::vector<int> expand_tasks_per_node(const std::string& list) {
  std::vector<int> counts;
  std::istringstream items(list);
  std::string item;
  while (std::getline(items, item, ',')) {
    int count = 0, repeat = 1;
    if (std::sscanf(item.c_str(), "%d(x%d)", &count, &repeat) < 1 || count < 0 || repeat < 1)
      throw InvalidArgument(fmt::format("SLURM_STEP_TASKS_PER_NODE='{}' is malformed", list));
    counts.insert(counts.end(), static_cast<size_t>(repeat), count);
  }
  return counts;
}

std::optional<ForeignLauncher> slurm(const Variables& v) {
  // SLURM_STEP_NUM_TASKS is set inside an srun step only: a batch script's
  // own process (SLURM_PROCID=0 of the allocation) is not a rank.
  if (!v.has("SLURM_STEP_NUM_TASKS") || !v.has("SLURM_PROCID")) return std::nullopt;
  ForeignLauncher l;
  l.name = "srun (Slurm)";
  l.size = v.number("SLURM_STEP_NUM_TASKS", 1);
  l.rank = v.number("SLURM_PROCID", 0);
  l.local_rank = v.optional_number("SLURM_LOCALID", 0).value_or(0);
  l.local_size = 0;  // unknown unless the step says
  if (auto per_node = v.text("SLURM_STEP_TASKS_PER_NODE")) {
    const auto counts = expand_tasks_per_node(*per_node);
    const size_t node = static_cast<size_t>(v.optional_number("SLURM_NODEID", 0).value_or(0));
    if (node >= counts.size())
      throw InvalidArgument(
          fmt::format("SLURM_NODEID={} but SLURM_STEP_TASKS_PER_NODE='{}'", node, *per_node));
    l.local_size = counts[node];
  }
  l.job_key = fmt::format("slurm-{}.{}", v.text("SLURM_JOB_ID").value_or("0"),
                          v.text("SLURM_STEP_ID").value_or("0"));
  if (auto nodes = v.text("SLURM_STEP_NODELIST")) l.rank0_host = first_host_of_slurm_list(*nodes);
  if (auto ports = v.text("SLURM_STEP_RESV_PORTS")) {
    int port = 0;
    std::from_chars(ports->data(), ports->data() + ports->size(), port);
    l.port_hint = port;
  }
  l.node_name = v.text("SLURMD_NODENAME").value_or("");
  l.node_key = l.node_name;
  return l;
}

}  // namespace

std::string first_host_of_slurm_list(const std::string& list) {
  std::string host;
  int depth = 0;
  bool in_range = false;  // inside [...] after the first range start
  for (char c : list) {
    if (c == '[') {
      if (depth++ != 0) break;
      in_range = false;
    } else if (c == ']') {
      if (--depth < 0) break;
    } else if (depth == 0 && c == ',') {
      break;
    } else if (depth == 1) {
      // Keep the first range's first number, padding included.
      if (c == ',' || c == '-') in_range = true;
      if (!in_range && c >= '0' && c <= '9') host += c;
    } else {
      host += c;
    }
  }
  if (depth != 0 || host.empty())
    throw InvalidArgument(fmt::format("SLURM_STEP_NODELIST='{}' is not a Slurm host list", list));
  return host;
}

std::optional<ForeignLauncher> detect_foreign_launcher(const settings::Lookup& env) {
  const Variables v(env);
  const std::function<std::optional<ForeignLauncher>(const Variables&)> detectors[] = {
      [](const Variables& vars) { return mpi_launcher(vars, kOpenMpi); },
      [](const Variables& vars) { return mpi_launcher(vars, kHydra); }, torch_distributed, slurm};
  for (const auto& detect : detectors) {
    std::optional<ForeignLauncher> l = detect(v);
    if (!l) continue;
    check_ranks(*l);
    return l;
  }
  return std::nullopt;
}

std::optional<ForeignLauncher> launcher_for(const settings::Values& values,
                                            const settings::Lookup& env) {
  if (values.is_set("KOLO_SIZE") || values.boolean("KOLO_ELASTIC")) return std::nullopt;
  return detect_foreign_launcher(env);
}

int rank_before_init(const settings::Lookup& env) {
  const settings::Values values = settings::Values::Read(env);
  const auto launcher = launcher_for(values, env);
  return launcher ? launcher->rank : static_cast<int>(values.integer("KOLO_RANK"));
}

}  // namespace kolo::launch
