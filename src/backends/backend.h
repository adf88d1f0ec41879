// Backend: what the engine needs from a communication library, for one group
// of ranks (the global process set or a subset of it).
//
// The engine (src/core) sees only this header, so a backend over MPI or NCCL
// slots in later without touching the engine. Two kinds of operations:
// - the data plane: the collectives that tensors go through;
// - the control plane: the small gather/broadcast/bitwise-AND that the
//   controller negotiates with, carried by the same connections as the data
//   (negotiation travels over the data plane, not the rendezvous store: the
//   store is one server that every rank of every step would wait on).
//
// Every call is a collective: all members make the same calls in the same
// order, with the same counts, types and roots (negotiation guarantees it).
// Failures come as the exceptions of common/error.h (PeerLostError naming the
// rank and host, TimeoutError, AbortedError); no call waits forever.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "collectives/fused_part.h"
#include "kolo/types.h"

namespace kolo::backends {

// One tensor of a fused allreduce (defined with the collectives, whose
// shared-memory rounds read and write the parts in place).
using collectives::FusedPart;

class Backend {
 public:
  virtual ~Backend() = default;

  virtual std::string_view name() const = 0;  // "tcp", later "mpi", "nccl"
  virtual int rank() const = 0;               // within this group
  virtual int size() const = 0;
  // "rank 3 (host b)", with the job-wide rank, for error messages.
  virtual std::string peer_name(int rank) const = 0;

  // Data plane (counts in elements; send may equal recv). A Reduction is
  // valid for the dtype (reduction_problem): the engine checks it where it
  // takes it, so an invalid one here is a bug.
  virtual void allreduce(const void* send, void* recv, size_t count, DataType dtype,
                         const Reduction& reduction) = 0;
  // Rank r contributes counts[r] elements; recv holds them all in rank order.
  virtual void allgatherv(const void* send, void* recv, const std::vector<size_t>& counts,
                          DataType dtype) = 0;
  virtual void broadcast(void* data, size_t count, DataType dtype, int root) = 0;
  virtual void alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                         const std::vector<size_t>& recv_counts, DataType dtype) = 0;
  // Reduces sum(counts) elements; rank r receives its counts[r] elements,
  // which start at the sum of counts[0..r) of the input.
  virtual void reduce_scatterv(const void* send, void* recv, const std::vector<size_t>& counts,
                               DataType dtype, const Reduction& reduction) = 0;
  virtual void barrier() = 0;
  // ReduceOp::kAdasum (floating types, a power-of-two group) combines whole
  // tensors, not elements: allreduce() treats its buffer as one tensor and
  // allreduce_parts() gives each part its own coefficients, as Horovod's
  // fused Adasum does (collectives/adasum/adasum.h).
  //
  // Allreduces the concatenation of `parts` as one tensor. This default
  // fuses them into a temporary buffer around allreduce() (for Adasum it
  // calls allreduce() part by part instead); a backend that
  // can read and write each part where it is (shared memory stages the data
  // anyway) overrides it and says so in reduces_parts_in_place(), and the
  // engine then skips its fusion buffer.
  virtual void allreduce_parts(const std::vector<FusedPart>& parts, DataType dtype,
                               const Reduction& reduction);
  // Whether allreduce_parts() works on the parts in place for this dtype and
  // reduction; the same answer on every rank of the group.
  virtual bool reduces_parts_in_place(DataType dtype, const Reduction& reduction) const {
    return false;
  }

  // Control plane.
  // Every rank's `mine` arrives at `root`, indexed by rank; other ranks get
  // an empty vector.
  virtual std::vector<std::string> gather_bytes(int root, const std::string& mine) = 0;
  // `data` on root replaces `data` everywhere.
  virtual void broadcast_bytes(int root, std::string& data) = 0;
  // Element-wise bitwise AND of `words` across ranks, in place.
  virtual void allreduce_and(std::vector<uint64_t>& words) = 0;

  // A backend over `ranks` (ranks of this group, ascending, including this
  // rank), for a process set. `group_id` (1..65535, unique in the job and the
  // same on every member) keeps its messages apart from every other group's.
  // Called by every member, and only by them, at the same point of their
  // sequences: it may exchange messages among them (HostBackend finds out
  // which members share a host and maps a segment for them).
  virtual std::unique_ptr<Backend> subgroup(const std::vector<int>& ranks, uint32_t group_id) = 0;

  // Fails every pending and later operation of the whole job with `reason`,
  // and tells the peers why.
  virtual void abort(const std::string& reason) = 0;

  // Whether this group has a hierarchical path (shared memory within hosts,
  // then across hosts) whose choice changes anything; the autotuner tries
  // the hierarchical settings only then.
  virtual bool has_hierarchical_path() const { return false; }
  // Turns the hierarchical allreduce and allgather on or off from the next
  // operation on. Every member calls it at the same point of its sequence
  // (the autotuner's settings arrive in a negotiation); a no-op without a
  // hierarchical path.
  virtual void set_hierarchical(bool allreduce, bool allgather) {
    (void)allreduce;
    (void)allgather;
  }
};

}  // namespace kolo::backends
