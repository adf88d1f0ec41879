#include "backends/mpi/mpi_ops.h"

#include <utility>

#include "collectives/reduce/reduce.h"
#include "common/error.h"

namespace kolo::backends::mpi {
namespace {

// Reduced by Kolo's kernels. The 8- and 16-bit integers too: OpenMPI 4.1's
// AVX MPI_SUM on uint8 saturates instead of wrapping (MpiBackendTest found
// it), and Kolo's results must not depend on the MPI library.
constexpr std::array<DataType, kUserTypeCount> kUserTypes = {
    DataType::kFloat16, DataType::kBFloat16, DataType::kBool,
    DataType::kUInt8,   DataType::kInt8,     DataType::kInt16};

// One MPI_User_function per (dtype, op): MPI passes no user data to it, so
// the pair is in the function's type instead of in a table it would look up.
template <DataType D, ReduceOp O>
void combine(void* in, void* inout, int* len, MPI_Datatype*) {
  reduce::reduce_into(inout, in, static_cast<size_t>(*len), D, O);
}

template <DataType D, size_t... O>
std::array<MPI_User_function*, kNumReduceOps> functions_for(std::index_sequence<O...>) {
  return {&combine<D, static_cast<ReduceOp>(O)>...};
}

int user_index(DataType dtype) {
  for (size_t i = 0; i < kUserTypes.size(); ++i)
    if (kUserTypes[i] == dtype) return static_cast<int>(i);
  return -1;
}

MPI_Op builtin_op(ReduceOp op) {
  switch (op) {
    case ReduceOp::kSum:
    case ReduceOp::kAverage:
      return MPI_SUM;
    case ReduceOp::kMin:
      return MPI_MIN;
    case ReduceOp::kMax:
      return MPI_MAX;
    case ReduceOp::kProduct:
      return MPI_PROD;
    case ReduceOp::kBitAnd:
      return MPI_BAND;
    case ReduceOp::kBitOr:
      return MPI_BOR;
    case ReduceOp::kAdasum:
      break;  // not elementwise: MpiBackend runs it over point-to-point messages
  }
  throw InternalError("unknown ReduceOp");
}

}  // namespace

MpiOps::MpiOps() {
  constexpr auto ops = std::make_index_sequence<kNumReduceOps>();
  const std::array<std::array<MPI_User_function*, kNumReduceOps>, kUserTypeCount> functions = {
      functions_for<DataType::kFloat16>(ops), functions_for<DataType::kBFloat16>(ops),
      functions_for<DataType::kBool>(ops),    functions_for<DataType::kUInt8>(ops),
      functions_for<DataType::kInt8>(ops),    functions_for<DataType::kInt16>(ops)};
  for (size_t t = 0; t < functions.size(); ++t)
    for (size_t o = 0; o < kNumReduceOps; ++o)
      MPI_Op_create(functions[t][o], /*commute=*/1, &user_ops_[t][o]);
}

MpiOps::~MpiOps() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) return;
  for (auto& row : user_ops_)
    for (MPI_Op& op : row)
      if (op != MPI_OP_NULL) MPI_Op_free(&op);
}

MPI_Datatype MpiOps::type(DataType dtype) {
  switch (dtype) {
    case DataType::kUInt8:
    case DataType::kBool:
      return MPI_UINT8_T;
    case DataType::kInt8:
      return MPI_INT8_T;
    case DataType::kInt16:
      return MPI_INT16_T;
    case DataType::kInt32:
      return MPI_INT32_T;
    case DataType::kInt64:
      return MPI_INT64_T;
    case DataType::kFloat16:
    case DataType::kBFloat16:
      return MPI_UINT16_T;
    case DataType::kFloat32:
      return MPI_FLOAT;
    case DataType::kFloat64:
      return MPI_DOUBLE;
  }
  throw InternalError("unknown DataType");
}

MPI_Op MpiOps::op(DataType dtype, ReduceOp op) const {
  const int user = user_index(dtype);
  if (user >= 0) return user_ops_[static_cast<size_t>(user)][static_cast<size_t>(op)];
  return builtin_op(op);
}

}  // namespace kolo::backends::mpi
