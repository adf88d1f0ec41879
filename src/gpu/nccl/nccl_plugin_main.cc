// libkolo_nccl.so: NcclLibrary over NCCL. The only code of Kolo that includes
// nccl.h or links libnccl (by its soname, libnccl.so.2: where torch was
// imported first, the copy torch loaded serves). Built only when CMake finds
// the CUDA toolkit and NCCL (cmake/KoloCuda.cmake).
//
// Communicators are non-blocking (ncclConfig_t.blocking = 0): a call may
// return ncclInProgress while NCCL finishes it in the background, which is
// what lets CommWatchdog see a dead peer instead of hanging in a call.
#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <cstring>
#include <thread>

#include "common/error.h"
#include "gpu/nccl_plugin.h"

namespace kolo::gpu {
namespace {

std::string result_text(ncclResult_t result, ncclComm_t comm) {
  const char* detail = comm != nullptr ? ncclGetLastError(comm) : nullptr;
  return fmt::format("{}{}{}", ncclGetErrorString(result),
                     detail != nullptr && detail[0] != '\0' ? ": " : "",
                     detail != nullptr ? detail : "");
}

// ncclInProgress is not a failure on a non-blocking communicator.
void check(ncclResult_t result, ncclComm_t comm, const char* call) {
  if (result != ncclSuccess && result != ncclInProgress) {
    throw IoError(fmt::format("{}: {}", call, result_text(result, comm)));
  }
}

ncclDataType_t nccl_type(DataType dtype) {
  switch (dtype) {
    case DataType::kUInt8:
      return ncclUint8;
    case DataType::kInt8:
      return ncclInt8;
    case DataType::kInt32:
      return ncclInt32;
    case DataType::kInt64:
      return ncclInt64;
    case DataType::kFloat16:
      return ncclFloat16;
    case DataType::kBFloat16:
      return ncclBfloat16;
    case DataType::kFloat32:
      return ncclFloat32;
    case DataType::kFloat64:
      return ncclFloat64;
    default:
      break;
  }
  throw InvalidArgument(fmt::format("NCCL has no type for {}", dtype_name(dtype)));
}

// Data movement only: any type of the same size moves the same bytes.
ncclDataType_t moved_type(DataType dtype) {
  return dtype_size(dtype) == 1 ? ncclUint8 : nccl_type(dtype);
}

ncclRedOp_t nccl_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
      return ncclSum;
    case ReduceOp::kAverage:
      return ncclAvg;
    case ReduceOp::kMin:
      return ncclMin;
    case ReduceOp::kMax:
      return ncclMax;
    case ReduceOp::kProduct:
      return ncclProd;
    default:
      break;
  }
  throw InvalidArgument(fmt::format("NCCL has no reduction {}", reduce_op_name(op)));
}

cudaStream_t cuda(StreamHandle stream) {
  return static_cast<cudaStream_t>(stream);
}

class Communicator final : public NcclCommunicator {
 public:
  Communicator(ncclComm_t comm, int rank, int size, std::string what)
      : comm_(comm), rank_(rank), size_(size), what_(std::move(what)) {}
  ~Communicator() override {
    // An aborted communicator is already freed; a healthy one is destroyed
    // (ncclCommFinalize would wait for its peers, which may be gone).
    if (!aborted_) (void)ncclCommAbort(comm_);
  }

  std::optional<std::string> async_error() override {
    ncclResult_t state = ncclSuccess;
    const ncclResult_t result = ncclCommGetAsyncError(comm_, &state);
    if (result != ncclSuccess) return result_text(result, comm_);
    if (state == ncclSuccess || state == ncclInProgress) return std::nullopt;
    return result_text(state, comm_);
  }
  void abort() override {
    if (aborted_) return;
    aborted_ = true;
    (void)ncclCommAbort(comm_);
  }
  std::string describe() const override { return what_; }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  void allreduce(const void* input, void* output, size_t count, DataType dtype, ReduceOp op,
                 StreamHandle stream) override {
    check(ncclAllReduce(input, output, count, nccl_type(dtype), nccl_op(op), comm_, cuda(stream)),
          comm_, "ncclAllReduce");
  }
  void broadcast(void* data, size_t count, DataType dtype, int root, StreamHandle stream) override {
    check(ncclBroadcast(data, data, count, moved_type(dtype), root, comm_, cuda(stream)), comm_,
          "ncclBroadcast");
  }
  void allgather(const void* input, void* output, size_t count, DataType dtype,
                 StreamHandle stream) override {
    check(ncclAllGather(input, output, count, moved_type(dtype), comm_, cuda(stream)), comm_,
          "ncclAllGather");
  }
  void reduce_scatter(const void* input, void* output, size_t count, DataType dtype, ReduceOp op,
                      StreamHandle stream) override {
    check(
        ncclReduceScatter(input, output, count, nccl_type(dtype), nccl_op(op), comm_, cuda(stream)),
        comm_, "ncclReduceScatter");
  }
  void send(const void* data, size_t count, DataType dtype, int peer,
            StreamHandle stream) override {
    check(ncclSend(data, count, moved_type(dtype), peer, comm_, cuda(stream)), comm_, "ncclSend");
  }
  void receive(void* data, size_t count, DataType dtype, int peer, StreamHandle stream) override {
    check(ncclRecv(data, count, moved_type(dtype), peer, comm_, cuda(stream)), comm_, "ncclRecv");
  }
  void group_start() override { check(ncclGroupStart(), comm_, "ncclGroupStart"); }
  void group_end() override { check(ncclGroupEnd(), comm_, "ncclGroupEnd"); }

 private:
  ncclComm_t comm_;
  int rank_;
  int size_;
  std::string what_;
  bool aborted_ = false;
};

class Library final : public NcclLibrary {
 public:
  std::string version() override {
    int code = 0;
    (void)ncclGetVersion(&code);
    return fmt::format("NCCL {}.{}.{}", code / 10000, code % 10000 / 100, code % 100);
  }

  std::string unique_id() override {
    ncclUniqueId id;
    check(ncclGetUniqueId(&id), nullptr, "ncclGetUniqueId");
    static_assert(sizeof(id.internal) == NCCL_UNIQUE_ID_BYTES);
    return std::string(id.internal, sizeof(id.internal));
  }

  std::unique_ptr<NcclCommunicator> connect(const std::string& unique_id, int size, int rank,
                                            int device, std::chrono::milliseconds timeout,
                                            const std::string& what) override {
    ncclUniqueId id;
    if (unique_id.size() != sizeof(id.internal)) {
      throw InvalidArgument(fmt::format("{}: an NCCL unique id has {} bytes, not {}", what,
                                        sizeof(id.internal), unique_id.size()));
    }
    std::memcpy(id.internal, unique_id.data(), sizeof(id.internal));
    if (cudaError_t error = cudaSetDevice(device); error != cudaSuccess) {
      throw IoError(
          fmt::format("{}: cudaSetDevice({}): {}", what, device, cudaGetErrorString(error)));
    }
    ncclConfig_t config = NCCL_CONFIG_INITIALIZER;
    config.blocking = 0;
    ncclComm_t comm = nullptr;
    check(ncclCommInitRankConfig(&comm, size, id, rank, &config), comm, "ncclCommInitRankConfig");
    auto communicator = std::make_unique<Communicator>(comm, rank, size, what);
    wait_for_init(*communicator, comm, timeout);
    return communicator;
  }

 private:
  static void wait_for_init(Communicator& communicator, ncclComm_t comm,
                            std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    while (true) {
      ncclResult_t state = ncclInProgress;
      check(ncclCommGetAsyncError(comm, &state), comm, "ncclCommGetAsyncError");
      if (state == ncclSuccess) return;
      if (state != ncclInProgress) {
        communicator.abort();
        throw IoError(
            fmt::format("{}: init failed: {}", communicator.describe(), result_text(state, comm)));
      }
      if (std::chrono::steady_clock::now() >= deadline) {
        communicator.abort();
        throw TimeoutError(fmt::format("{}: init not done after {} ms: a member never joined",
                                       communicator.describe(), timeout.count()));
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
    }
  }
};

}  // namespace
}  // namespace kolo::gpu

extern "C" __attribute__((visibility("default"))) kolo::gpu::NcclLibrary* kolo_nccl_plugin(
    uint32_t abi_version) {
  if (abi_version != kolo::gpu::kNcclPluginAbiVersion) return nullptr;
  static kolo::gpu::Library library;
  return &library;
}
