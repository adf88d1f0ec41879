#include "backends/mpi/mpi_backend.h"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cstring>

#include "collectives/adasum/adasum.h"
#include "collectives/collectives.h"
#include "collectives/reduce/reduce.h"
#include "common/error.h"
#include "common/logging.h"

namespace kolo::backends::mpi {
namespace {

// MPI counts are int; one call moves at most this many elements, larger
// allreduces and broadcasts go in pieces.
constexpr size_t kMaxCount = INT_MAX;

int as_count(size_t n, const char* what) {
  if (n > kMaxCount) {
    throw InvalidArgument(fmt::format(
        "{}: {} elements in one block is more than the MPI backend can pass (at most {})", what, n,
        kMaxCount));
  }
  return static_cast<int>(n);
}

// Counts and displacements of a v-collective, as MPI wants them.
struct Layout {
  std::vector<int> counts;
  std::vector<int> displacements;
};

Layout layout_of(const std::vector<size_t>& counts, const char* what) {
  Layout l;
  size_t offset = 0;
  for (size_t c : counts) {
    l.counts.push_back(as_count(c, what));
    l.displacements.push_back(as_count(offset, what));
    offset += c;
  }
  return l;
}

}  // namespace

void check_mpi(int rc, const char* what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING] = {};
  int length = 0;
  MPI_Error_string(rc, text, &length);
  throw IoError(fmt::format("{} failed: {}", what, std::string(text, static_cast<size_t>(length))));
}

MpiBackend::MpiBackend(MPI_Comm comm, std::shared_ptr<const MpiOps> ops,
                       std::vector<int> world_ranks, std::vector<std::string> hosts)
    : comm_(comm),
      ops_(std::move(ops)),
      world_ranks_(std::move(world_ranks)),
      hosts_(std::move(hosts)) {
  check_mpi(MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN), "MPI_Comm_set_errhandler");
  check_mpi(MPI_Comm_rank(comm_, &rank_), "MPI_Comm_rank");
  check_mpi(MPI_Comm_size(comm_, &size_), "MPI_Comm_size");
}

MpiBackend::~MpiBackend() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (!finalized) MPI_Comm_free(&comm_);
}

std::string MpiBackend::peer_name(int rank) const {
  if (rank < 0 || rank >= size_) return fmt::format("rank {} of {}", rank, size_);
  return fmt::format("rank {} (host {})", world_ranks_[static_cast<size_t>(rank)],
                     hosts_[static_cast<size_t>(rank)]);
}

void MpiBackend::allreduce(const void* send, void* recv, size_t count, DataType dtype,
                           const Reduction& reduction) {
  if (reduction.op == ReduceOp::kAdasum) {
    allreduce_parts({FusedPart{send, recv, count}}, dtype, reduction);
    return;
  }
  if (count == 0) return;
  const size_t element = dtype_size(dtype);
  // Prescale works on a copy in recv (the input is the caller's); the rest
  // is reduced in place there, as the host backend does.
  const bool in_place = send == recv || reduction.prescale != 1.0;
  if (reduction.prescale != 1.0) {
    if (send != recv) std::memcpy(recv, send, count * element);
    reduce::scale(recv, count, dtype, reduction.prescale);
  }
  const MPI_Datatype type = MpiOps::type(dtype);
  const MPI_Op op = ops_->op(dtype, reduction.op);
  for (size_t done = 0; done < count; done += kMaxCount) {
    const int n = static_cast<int>(std::min(kMaxCount, count - done));
    auto* out = static_cast<std::byte*>(recv) + done * element;
    const void* in = in_place ? MPI_IN_PLACE : static_cast<const std::byte*>(send) + done * element;
    check_mpi(MPI_Allreduce(in, out, n, type, op, comm_), "MPI_Allreduce");
  }
  reduce::scale(recv, count, dtype, collectives::result_scale(reduction, size_));
}

void MpiBackend::allreduce_parts(const std::vector<FusedPart>& parts, DataType dtype,
                                 const Reduction& reduction) {
  if (reduction.op != ReduceOp::kAdasum) {
    Backend::allreduce_parts(parts, dtype, reduction);
    return;
  }
  collectives::adasum_allreduce(point_to_point(), ++adasum_tag_, parts, dtype, reduction);
}

MpiPointToPoint& MpiBackend::point_to_point() {
  if (!point_to_point_) {
    point_to_point_ = std::make_unique<MpiPointToPoint>(
        comm_, rank_, size_, [this](int rank) { return peer_name(rank); },
        [this](const std::string& reason) { abort(reason); });
  }
  return *point_to_point_;
}

void MpiBackend::allgatherv(const void* send, void* recv, const std::vector<size_t>& counts,
                            DataType dtype) {
  const Layout l = layout_of(counts, "allgather");
  const MPI_Datatype type = MpiOps::type(dtype);
  const size_t element = dtype_size(dtype);
  const size_t mine = counts[static_cast<size_t>(rank_)];
  const auto* own_slot = static_cast<std::byte*>(recv) +
                         static_cast<size_t>(l.displacements[static_cast<size_t>(rank_)]) * element;
  const void* in = send == own_slot ? MPI_IN_PLACE : send;
  check_mpi(MPI_Allgatherv(in, as_count(mine, "allgather"), type, recv, l.counts.data(),
                           l.displacements.data(), type, comm_),
            "MPI_Allgatherv");
}

void MpiBackend::broadcast(void* data, size_t count, DataType dtype, int root) {
  const size_t element = dtype_size(dtype);
  for (size_t done = 0; done < count; done += kMaxCount) {
    const int n = static_cast<int>(std::min(kMaxCount, count - done));
    check_mpi(MPI_Bcast(static_cast<std::byte*>(data) + done * element, n, MpiOps::type(dtype),
                        root, comm_),
              "MPI_Bcast");
  }
}

void MpiBackend::alltoallv(const void* send, const std::vector<size_t>& send_counts, void* recv,
                           const std::vector<size_t>& recv_counts, DataType dtype) {
  const Layout s = layout_of(send_counts, "alltoall");
  const Layout r = layout_of(recv_counts, "alltoall");
  const MPI_Datatype type = MpiOps::type(dtype);
  check_mpi(MPI_Alltoallv(send, s.counts.data(), s.displacements.data(), type, recv,
                          r.counts.data(), r.displacements.data(), type, comm_),
            "MPI_Alltoallv");
}

void MpiBackend::reduce_scatterv(const void* send, void* recv, const std::vector<size_t>& counts,
                                 DataType dtype, const Reduction& reduction) {
  const Layout l = layout_of(counts, "reducescatter");
  size_t total = 0;
  for (size_t c : counts) total += c;
  if (total == 0) return;
  const size_t element = dtype_size(dtype);
  // MPI reads the whole input while it writes this rank's block: a prescaled
  // or aliased input goes through a copy.
  std::vector<std::byte> copy;
  const void* input = send;
  if (reduction.prescale != 1.0 || send == recv) {
    copy.assign(static_cast<const std::byte*>(send),
                static_cast<const std::byte*>(send) + total * element);
    reduce::scale(copy.data(), total, dtype, reduction.prescale);
    input = copy.data();
  }
  check_mpi(MPI_Reduce_scatter(input, recv, l.counts.data(), MpiOps::type(dtype),
                               ops_->op(dtype, reduction.op), comm_),
            "MPI_Reduce_scatter");
  reduce::scale(recv, counts[static_cast<size_t>(rank_)], dtype,
                collectives::result_scale(reduction, size_));
}

void MpiBackend::barrier() {
  check_mpi(MPI_Barrier(comm_), "MPI_Barrier");
}

std::vector<std::string> MpiBackend::gather_bytes(int root, const std::string& mine) {
  const int length = as_count(mine.size(), "gather_bytes");
  std::vector<int> lengths(rank_ == root ? static_cast<size_t>(size_) : 0);
  check_mpi(MPI_Gather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, root, comm_), "MPI_Gather");
  std::vector<int> offsets;
  std::string all;
  if (rank_ == root) {
    size_t total = 0;
    for (int n : lengths) {
      offsets.push_back(as_count(total, "gather_bytes"));
      total += static_cast<size_t>(n);
    }
    all.resize(total);
  }
  check_mpi(MPI_Gatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
                        MPI_CHAR, root, comm_),
            "MPI_Gatherv");
  std::vector<std::string> out;
  if (rank_ != root) return out;
  for (int r = 0; r < size_; ++r) {
    out.emplace_back(all, static_cast<size_t>(offsets[static_cast<size_t>(r)]),
                     static_cast<size_t>(lengths[static_cast<size_t>(r)]));
  }
  return out;
}

void MpiBackend::broadcast_bytes(int root, std::string& data) {
  uint64_t length = data.size();
  check_mpi(MPI_Bcast(&length, 1, MPI_UINT64_T, root, comm_), "MPI_Bcast");
  data.resize(length);
  broadcast(data.data(), length, DataType::kUInt8, root);
}

void MpiBackend::allreduce_and(std::vector<uint64_t>& words) {
  if (words.empty()) return;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, words.data(), as_count(words.size(), "allreduce_and"),
                          MPI_UINT64_T, MPI_BAND, comm_),
            "MPI_Allreduce");
}

std::unique_ptr<Backend> MpiBackend::subgroup(const std::vector<int>& ranks, uint32_t group_id) {
  MPI_Group all = MPI_GROUP_NULL;
  MPI_Group members = MPI_GROUP_NULL;
  check_mpi(MPI_Comm_group(comm_, &all), "MPI_Comm_group");
  check_mpi(MPI_Group_incl(all, static_cast<int>(ranks.size()), ranks.data(), &members),
            "MPI_Group_incl");
  MPI_Comm sub = MPI_COMM_NULL;
  // Collective over the members only, which is when the engine calls it; the
  // set's id as the tag keeps concurrent creations apart.
  const int rc = MPI_Comm_create_group(comm_, members, static_cast<int>(group_id), &sub);
  MPI_Group_free(&members);
  MPI_Group_free(&all);
  check_mpi(rc, "MPI_Comm_create_group");
  std::vector<int> world_ranks;
  std::vector<std::string> hosts;
  for (int r : ranks) {
    world_ranks.push_back(world_ranks_.at(static_cast<size_t>(r)));
    hosts.push_back(hosts_.at(static_cast<size_t>(r)));
  }
  return std::make_unique<MpiBackend>(sub, ops_, std::move(world_ranks), std::move(hosts));
}

void MpiBackend::abort(const std::string& reason) {
  // MPI cannot interrupt the peers' pending calls any other way, and they
  // would wait forever; the engine has logged the reason already.
  KOLO_LOG_ERROR("rank {}: ending the MPI job: {}", peer_name(rank_), reason);
  MPI_Abort(comm_, 1);
}

}  // namespace kolo::backends::mpi
