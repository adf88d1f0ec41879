// MpiPointToPoint: transport::Context over an MPI communicator's
// point-to-point messages (MPI_Isend/MPI_Irecv of bytes), so the algorithms
// of src/collectives that need only messages (Adasum) run on the MPI
// backend too, over whatever fabric the MPI library drives.
//
// Matching: MPI matches (source, tag, communicator) in send order, as the
// Context contract wants; Kolo's 64-bit tag is folded into MPI's guaranteed
// tag range (0..32767). The backend runs one operation at a time on its
// communicator, so folded tags of different operations never meet.
// Messages above INT_MAX bytes go in pieces. MPI has no timeouts: a wait
// blocks until MPI completes it or the job ends (as the MPI backend's
// collectives do); abort() ends the job through MPI_Abort.
#pragma once

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>

#include "transport/context.h"

namespace kolo::backends::mpi {

class MpiPointToPoint final : public transport::Context {
 public:
  // `comm` stays owned by the caller and must outlive this object;
  // `peer_name` names a rank for errors, `abort` ends the job.
  MpiPointToPoint(MPI_Comm comm, int rank, int size, std::function<std::string(int)> peer_name,
                  std::function<void(const std::string&)> abort);

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  std::string peer_name(int rank) const override { return peer_name_(rank); }

  std::unique_ptr<transport::Request> isend(int peer, transport::Tag tag, const void* data,
                                            size_t bytes) override;
  std::unique_ptr<transport::Request> irecv(int peer, transport::Tag tag, void* data,
                                            size_t bytes) override;
  void abort(const std::string& reason) override { abort_(reason); }

 private:
  MPI_Comm comm_;
  int rank_, size_;
  std::function<std::string(int)> peer_name_;
  std::function<void(const std::string&)> abort_;
};

}  // namespace kolo::backends::mpi
