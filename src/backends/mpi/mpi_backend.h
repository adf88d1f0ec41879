// MpiBackend: the Backend over an MPI communicator (plugin side; built into
// libkolo_mpi.so only). For fabrics Kolo's TCP cannot use (InfiniBand,
// Omni-Path, Slingshot through the MPI library's own transports), and for jobs
// that mpirun starts without Kolo's launcher.
//
// Each backend owns its communicator: a duplicate of the job's, so Kolo's
// messages never meet the caller's, or one made for a process set with
// MPI_Comm_create_group. Errors return (MPI_ERRORS_RETURN) and become IoError
// with MPI's text. The engine calls it from its background thread only.
//
// Failures: MPI has no timeouts, so abort() ends the job through MPI_Abort
// (mpirun then stops every rank, naming this one); a rank that dies is
// reported the same way by mpirun.
#pragma once

#include <mpi.h>

#include <memory>
#include <string>
#include <vector>

#include "backends/backend.h"
#include "backends/mpi/mpi_ops.h"
#include "backends/mpi/mpi_point_to_point.h"

namespace kolo::backends::mpi {

// Throws IoError naming `what` and MPI's error text unless rc is MPI_SUCCESS.
void check_mpi(int rc, const char* what);

class MpiBackend final : public Backend {
 public:
  // Takes `comm` (made for Kolo alone; freed here). `world_ranks[i]` and
  // `hosts[i]` are member i's MPI_COMM_WORLD rank and processor name, for
  // error messages.
  MpiBackend(MPI_Comm comm, std::shared_ptr<const MpiOps> ops, std::vector<int> world_ranks,
             std::vector<std::string> hosts);
  ~MpiBackend() override;

  std::string_view name() const override { return "mpi"; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string peer_name(int rank) const override;

  void allreduce(const void* send, void* recv, size_t count, DataType dtype,
                 const Reduction& reduction) override;
  void allgatherv(const void* send, void* recv, const std::vector<size_t>& counts,
                  DataType dtype) override;
  void broadcast(void* data, size_t count, DataType dtype, int root) override;
  void alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                 const std::vector<size_t>& recv_counts, DataType dtype) override;
  void reduce_scatterv(const void* send, void* recv, const std::vector<size_t>& counts,
                       DataType dtype, const Reduction& reduction) override;
  void barrier() override;
  // Adasum runs Kolo's algorithm over this communicator's point-to-point
  // messages, each part with its own coefficients.
  void allreduce_parts(const std::vector<FusedPart>& parts, DataType dtype,
                       const Reduction& reduction) override;

  std::vector<std::string> gather_bytes(int root, const std::string& mine) override;
  void broadcast_bytes(int root, std::string& data) override;
  void allreduce_and(std::vector<uint64_t>& words) override;

  std::unique_ptr<Backend> subgroup(const std::vector<int>& ranks, uint32_t group_id) override;
  void abort(const std::string& reason) override;

 private:
  MPI_Comm comm_;
  std::shared_ptr<const MpiOps> ops_;
  std::vector<int> world_ranks_;
  std::vector<std::string> hosts_;
  int rank_ = 0;
  int size_ = 1;
  // Adasum's messages (created on first use; tags count its operations).
  std::unique_ptr<MpiPointToPoint> point_to_point_;
  transport::Tag adasum_tag_ = 0;
  MpiPointToPoint& point_to_point();
};

}  // namespace kolo::backends::mpi
