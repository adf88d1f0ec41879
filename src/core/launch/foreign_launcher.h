// Foreign launchers: a rank started by mpirun/mpiexec (OpenMPI, MPICH's
// Hydra), srun (Slurm) or torchrun rather than kolorun. Each says where the
// process sits in its own environment variables; this reads them into one
// description, so `python train.py` under any of them forms the world the
// launcher meant instead of a silent world of one.
//
// Detection order, most specific first: OpenMPI, MPICH/Hydra (PMI_*),
// torchrun (inside an srun step too: its variables describe the workers it
// started), Slurm. kolorun's own KOLO_SIZE wins over all of them (Config).
#pragma once

#include <optional>
#include <string>

#include "common/settings/values.h"

namespace kolo::launch {

struct ForeignLauncher {
  std::string name;  // "mpirun (OpenMPI)", "mpiexec (MPICH)", "srun (Slurm)", "torchrun"
  int rank = 0;
  int size = 1;
  int local_rank = 0;
  int local_size = 1;
  // Equal on every rank of one job on one host and different between jobs:
  // names the file through which ranks on one host meet (rendezvous_file.h).
  std::string job_key;
  // Where rank 0 runs, when the launcher says (torchrun's MASTER_ADDR, the
  // first node of a Slurm step), and a port it names for the job
  // (MASTER_PORT + 1, a Slurm reserved port); empty / 0 when unknown.
  std::string rank0_host;
  int port_hint = 0;
  // The launcher's name for this node (SLURMD_NODENAME, the -H or hostfile
  // name under OpenMPI's mpirun): the host name in errors; empty: none.
  std::string node_name;
  // The launcher's own identity of this rank's node, where it gives one:
  // equal for the ranks it placed on one node, different between nodes
  // (OpenMPI: the daemon that started the rank; Slurm: the node's name).
  // Tells apart machines that look alike from inside (containers or
  // network namespaces sharing a host name and a boot); empty: none.
  std::string node_key;
  // Whether MPI's own runtime could carry the rendezvous (mpirun/mpiexec).
  bool mpi_launched = false;
};

// Reads the launcher variables through `env`. nullopt: no launcher set any.
// Throws InvalidArgument naming the variable when one is malformed or the
// set is inconsistent (a rank beyond the size, a size without a rank).
std::optional<ForeignLauncher> detect_foreign_launcher(
    const settings::Lookup& env = settings::from_environment);

// The launcher whose layout this process takes, given the settings already
// read: none when kolorun set the layout (KOLO_SIZE) or an elastic driver
// places it (KOLO_ELASTIC), else what detect_foreign_launcher finds.
std::optional<ForeignLauncher> launcher_for(
    const settings::Values& values, const settings::Lookup& env = settings::from_environment);

// This process's rank before init, by the same rule: kolorun's KOLO_RANK,
// else its launcher's, else 0 (kolo.run's workers need it before init).
int rank_before_init(const settings::Lookup& env = settings::from_environment);

// The first host of a Slurm hostlist: "n[3-5,9],m1" -> "n3", "a-[08-10]" ->
// "a-08". Throws InvalidArgument on a malformed list.
std::string first_host_of_slurm_list(const std::string& list);

}  // namespace kolo::launch
