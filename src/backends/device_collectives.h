// DeviceCollectives: one process set's collectives on device (CUDA) memory,
// as the engine's executor runs them for CUDA tensors. The CPU Backend
// (backend.h) stays the set's control plane and the path of host tensors;
// this carries only the data of device tensors.
//
// Implementations:
// - NCCL (backends/nccl/): enqueues NCCL's kernels on `stream` and returns
//   at once; wait() goes through gpu::CommWatchdog, so a dead peer fails the
//   wait within the peer timeout instead of hanging it.
// - host-staged (backends/staged/): copies through pinned host memory into
//   the set's CPU Backend (gpu/host_staging.h); it blocks the calling thread
//   for the CPU collective and returns once its copies back are enqueued.
//
// Contract (every implementation):
// - Every call is a collective with the CPU Backend's rules: all members
//   make the same calls in the same order with the same counts, types and
//   roots (negotiation guarantees it). Counts are elements.
// - The call's device work goes on `stream` after what is already queued
//   there: the caller has made `stream` wait for the inputs' ready events,
//   and records the completion event on `stream` after the call.
// - The caller waits for that event only through wait(), never by blocking
//   on CUDA directly.
// - Failures throw common/error.h's exceptions naming the cause (the peer,
//   NCCL's or CUDA's error text); after one, the object may refuse every
//   later call with AbortedError.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gpu/device_runtime.h"
#include "kolo/types.h"

namespace kolo::backends {

class DeviceCollectives {
 public:
  virtual ~DeviceCollectives() = default;

  virtual std::string_view name() const = 0;  // "nccl", "host-staged"
  virtual int rank() const = 0;               // within the process set
  virtual int size() const = 0;

  // Why this implementation cannot run a collective on `dtype` (with
  // `reduction` for the reducing ones, null otherwise), or "" when it can.
  // NCCL lacks bool and int16, the bitwise ops and Adasum; the engine then
  // uses the host-staged implementation for that response. The same answer
  // on every member for the same arguments.
  virtual std::string why_not(DataType dtype, const Reduction* reduction) const = 0;

  // `send` may equal `recv` (in place).
  virtual void allreduce(const void* send, void* recv, size_t count, DataType dtype,
                         const Reduction& reduction, gpu::StreamHandle stream) = 0;
  // Rank r contributes counts[r] elements; `recv` gets them all in rank order.
  virtual void allgatherv(const void* send, void* recv, const std::vector<size_t>& counts,
                          DataType dtype, gpu::StreamHandle stream) = 0;
  virtual void broadcast(void* data, size_t count, DataType dtype, int root,
                         gpu::StreamHandle stream) = 0;
  virtual void alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                         const std::vector<size_t>& recv_counts, DataType dtype,
                         gpu::StreamHandle stream) = 0;
  // Reduces sum(counts) elements; rank r receives its counts[r] elements,
  // which start at the sum of counts[0..r) of the input.
  virtual void reduce_scatterv(const void* send, void* recv, const std::vector<size_t>& counts,
                               DataType dtype, const Reduction& reduction,
                               gpu::StreamHandle stream) = 0;

  // Returns once `done` (an event the caller recorded on the stream after
  // this object's work) has completed. Throws, never waits for ever: NCCL's
  // implementation polls the event and the communicator's asynchronous
  // error and aborts the communicator on an error or after the peer
  // timeout. `what` names the operation in the error ("allreduce of
  // 'grad.0', 'grad.1'").
  virtual void wait(gpu::EventHandle done, const std::string& what) = 0;

  // Ends what is in flight and makes later calls fail with AbortedError
  // naming `reason` (the engine's error path, when another part failed).
  virtual void abort(const std::string& reason) = 0;
};

}  // namespace kolo::backends
