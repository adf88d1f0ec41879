// How Adasum's vector-halving distance-doubling (adasum.cc) moves data
// between ranks: the two things it asks of them, behind one interface, so
// the same algorithm runs over point-to-point messages (transport::Context,
// any backend) and through one host's shared memory
// (collectives/shm/shm_adasum.cc) with the same arithmetic in the same
// order, and so with the same bits.
#pragma once

#include <cstddef>
#include <vector>

#include "collectives/fused_part.h"
#include "kolo/types.h"

namespace kolo::collectives::adasum {

class Links {
 public:
  virtual ~Links() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Sends send_bytes from `send` to `peer` while receiving recv_bytes from
  // it into `recv`. Every rank makes the same calls in the same order, and
  // bound_bytes (the same on every rank for a call) is at least any rank's
  // send or receive in it, so a transport that moves data in rounds can
  // take the same number of rounds everywhere.
  virtual void exchange(int peer, const void* send, size_t send_bytes, void* recv,
                        size_t recv_bytes, size_t bound_bytes) = 0;

  // Sums `values` element by element over the `group` ranks (a power of
  // two) whose ranks differ from this one only in the bits below `group`.
  // The sum is the balanced tree in rank order, ((v0 + v1) + (v2 + v3)) +
  // ..., which recursive doubling computes on every member (each addition
  // takes the same two operands on both partners); every implementation
  // must give exactly those bits.
  virtual void sum_within_group(std::vector<double>& values, int group) = 0;
};

// Adasum over `links` (the body of adasum_allreduce, adasum.h: fusing the
// parts, scaling, the algorithm, copying out). The group size must be a
// power of two and reduce.op kAdasum on a floating dtype: the callers
// check both first.
void allreduce_over(Links& links, const std::vector<FusedPart>& parts, DataType dtype,
                    const Reduction& reduce);

}  // namespace kolo::collectives::adasum
