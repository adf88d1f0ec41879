// The ABI between Kolo and its NCCL plugin, libkolo_nccl.so: one C entry
// point, kolo_nccl_plugin(version), returning the plugin's NcclLibrary. As
// for the MPI and CUDA plugins, both sides come from the same tree, so the
// interface is C++; bump kNcclPluginAbiVersion whenever this file,
// comm_watchdog.h's WatchedCommunicator or include/kolo/types.h changes.
//
// The NCCL backend (backends/nccl, next step of issue 24) builds on this:
// one NcclCommunicator per process set, its id exchanged through the store
// (nccl_id_exchange.h), every wait through CommWatchdog.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "gpu/comm_watchdog.h"
#include "gpu/device_runtime.h"
#include "kolo/types.h"

namespace kolo::gpu {

inline constexpr uint32_t kNcclPluginAbiVersion = 1;
inline constexpr const char* kNcclPluginEntryPoint = "kolo_nccl_plugin";
inline constexpr const char* kNcclPluginFileName = "libkolo_nccl.so";

// One NCCL communicator. Every collective is enqueued on `stream` and
// returns at once; its completion is an event recorded on that stream after
// it, waited for through CommWatchdog. Counts are elements. Types NCCL
// cannot reduce (bool, int16) and ops it lacks (bitwise, Adasum) are refused
// with InvalidArgument before anything is enqueued (the engine routes them
// to the host-staged path). Throws IoError with NCCL's error text.
class NcclCommunicator : public WatchedCommunicator {
 public:
  virtual int rank() const = 0;
  virtual int size() const = 0;

  virtual void allreduce(const void* input, void* output, size_t count, DataType dtype, ReduceOp op,
                         StreamHandle stream) = 0;
  virtual void broadcast(void* data, size_t count, DataType dtype, int root,
                         StreamHandle stream) = 0;
  // `count` elements from every rank, in rank order, into `output`.
  virtual void allgather(const void* input, void* output, size_t count, DataType dtype,
                         StreamHandle stream) = 0;
  // `output` gets this rank's `count` elements of the reduction.
  virtual void reduce_scatter(const void* input, void* output, size_t count, DataType dtype,
                              ReduceOp op, StreamHandle stream) = 0;
  // Point to point, for allgatherv and alltoallv between group_start and
  // group_end (NCCL runs a group's sends and receives together).
  virtual void send(const void* data, size_t count, DataType dtype, int peer,
                    StreamHandle stream) = 0;
  virtual void receive(void* data, size_t count, DataType dtype, int peer, StreamHandle stream) = 0;
  virtual void group_start() = 0;
  virtual void group_end() = 0;
};

class NcclLibrary {
 public:
  virtual ~NcclLibrary() = default;
  // "NCCL 2.28.9".
  virtual std::string version() = 0;
  // ncclGetUniqueId's kNcclUniqueIdBytes bytes (on a communicator's rank 0).
  virtual std::string unique_id() = 0;
  // ncclCommInitRankConfig on `device`, collective over the communicator's
  // members. The init is non-blocking and polled, so a member that never
  // comes fails it after `timeout` (TimeoutError; the half-made
  // communicator is aborted) instead of hanging. `what` names it in
  // messages (WatchedCommunicator::describe()).
  virtual std::unique_ptr<NcclCommunicator> connect(const std::string& unique_id, int size,
                                                    int rank, int device,
                                                    std::chrono::milliseconds timeout,
                                                    const std::string& what) = 0;
};

}  // namespace kolo::gpu

extern "C" kolo::gpu::NcclLibrary* kolo_nccl_plugin(uint32_t abi_version);
using KoloNcclPluginEntry = kolo::gpu::NcclLibrary* (*)(uint32_t);
