// The public collectives: validation, the cases no algorithm needs to see
// (one rank, zero elements), copies between send and recv, prescale and
// postscale, and the choice of algorithm.
#include "collectives/collectives.h"

#include <fmt/format.h>

#include <cstring>

#include "collectives/adasum/adasum.h"
#include "collectives/algorithm_util.h"
#include "collectives/algorithms.h"
#include "collectives/reduce/reduce.h"
#include "common/check.h"
#include "common/error.h"
#include "common/even_shards.h"

namespace kolo::collectives {
namespace {

using detail::ByteRange;

// The engine refuses invalid reductions where it takes them; here one is a
// bug, caught before any message so the peers are not left waiting.
void check_reduction(const Reduction& reduce, DataType dtype) {
  KOLO_CHECK_MSG(reduce_op_supported(reduce.op, dtype), "{}", reduction_problem(reduce, dtype));
}

void check_counts(const std::vector<size_t>& counts, int size, const char* what) {
  if (counts.size() != static_cast<size_t>(size))
    throw InvalidArgument(fmt::format("{} has {} entries for {} ranks", what, counts.size(), size));
}

void copy_if_distinct(void* dst, const void* src, size_t bytes) {
  if (dst != src && bytes > 0) std::memmove(dst, src, bytes);
}

// Consecutive ranges of counts[i] elements each.
std::vector<ByteRange> packed_ranges(const std::vector<size_t>& counts, size_t element) {
  std::vector<ByteRange> ranges(counts.size());
  size_t offset = 0;
  for (size_t i = 0; i < counts.size(); ++i) {
    ranges[i] = {offset, counts[i] * element};
    offset += ranges[i].length;
  }
  return ranges;
}

AllreduceAlgorithm pick_allreduce(const CollectiveOptions& options, size_t bytes) {
  if (options.allreduce_algorithm != AllreduceAlgorithm::kAuto) return options.allreduce_algorithm;
  return bytes < options.allreduce_ring_threshold ? AllreduceAlgorithm::kRecursiveDoubling
                                                  : AllreduceAlgorithm::kRing;
}

size_t allreduce_ring_chunk(const CollectiveOptions& options, size_t bytes) {
  return std::min(options.ring_chunk_bytes, std::max(options.ring_min_chunk_bytes, bytes / 64));
}

BroadcastAlgorithm pick_broadcast(const CollectiveOptions& options, size_t bytes) {
  if (options.broadcast_algorithm != BroadcastAlgorithm::kAuto) return options.broadcast_algorithm;
  return bytes < options.broadcast_pipeline_threshold ? BroadcastAlgorithm::kTree
                                                      : BroadcastAlgorithm::kPipelined;
}

}  // namespace

double result_scale(const Reduction& reduce, int size) {
  return reduce.op == ReduceOp::kAverage ? reduce.postscale / size : reduce.postscale;
}

size_t reduce_scatter_count(size_t count, int size, int rank) {
  return even_shard(count, size, rank).count;
}

size_t reduce_scatter_offset(size_t count, int size, int rank) {
  return even_shard(count, size, rank).offset;
}

void allreduce(Context& ctx, Tag tag, const void* send, void* recv, size_t count, DataType dtype,
               const Reduction& reduce, const CollectiveOptions& options) {
  check_reduction(reduce, dtype);
  if (reduce.op == ReduceOp::kAdasum) {
    // Not elementwise: its own algorithm, which checks the world size.
    adasum_allreduce(ctx, tag, {FusedPart{send, recv, count}}, dtype, reduce);
    return;
  }
  if (count == 0) return;
  const int size = ctx.size();
  const size_t bytes = count * dtype_size(dtype);
  const double postscale = result_scale(reduce, size);
  const AllreduceAlgorithm algorithm = pick_allreduce(options, bytes);

  // The ring reads an out-of-place contribution straight from `send`; every
  // other path works in recv, and prescale needs a copy it may modify.
  const void* contribution = send;
  if (size == 1 || reduce.prescale != 1.0 || algorithm != AllreduceAlgorithm::kRing) {
    copy_if_distinct(recv, send, bytes);
    reduce::scale(recv, count, dtype, reduce.prescale);
    contribution = recv;
  }
  if (size == 1) {
    reduce::scale(recv, count, dtype, postscale);
    return;
  }
  if (algorithm == AllreduceAlgorithm::kRing) {
    detail::allreduce_ring(ctx, tag, contribution, recv, count, dtype, reduce.op, postscale,
                           allreduce_ring_chunk(options, bytes));
  } else {
    detail::allreduce_recursive_doubling(ctx, tag, recv, count, dtype, reduce.op);
    reduce::scale(recv, count, dtype, postscale);
  }
}

void reduce_scatter(Context& ctx, Tag tag, const void* send, void* recv, size_t count,
                    DataType dtype, const Reduction& reduce, const CollectiveOptions& options) {
  check_reduction(reduce, dtype);
  // The engine refuses Adasum for reducescatter, as Horovod does.
  KOLO_CHECK_MSG(reduce.op != ReduceOp::kAdasum, "reduce_scatter called with adasum");
  if (count == 0) return;
  const int size = ctx.size();
  const int rank = ctx.rank();
  const size_t element = dtype_size(dtype);
  const size_t shard_count = reduce_scatter_count(count, size, rank);
  const size_t shard_offset = reduce_scatter_offset(count, size, rank) * element;
  const double postscale = result_scale(reduce, size);
  const bool in_place = send == recv;

  // In place, recv holds all count elements on entry and is ours to modify;
  // otherwise the caller's send buffer stays untouched.
  const void* contribution = send;
  std::unique_ptr<std::byte[]> prescaled;
  if (reduce.prescale != 1.0) {
    void* scaled = recv;
    if (!in_place) {
      prescaled = detail::scratch_bytes(count * element);
      std::memcpy(prescaled.get(), send, count * element);
      scaled = prescaled.get();
    }
    reduce::scale(scaled, count, dtype, reduce.prescale);
    contribution = scaled;
  }

  if (size == 1) {
    copy_if_distinct(recv, contribution, count * element);
  } else if (in_place) {
    // Reduce into the shard's own place, then move it to the front.
    detail::reduce_scatter_ring(ctx, tag, recv, detail::at(recv, shard_offset), count, dtype,
                                reduce.op, options.ring_chunk_bytes);
    copy_if_distinct(recv, detail::at(recv, shard_offset), shard_count * element);
  } else {
    detail::reduce_scatter_ring(ctx, tag, contribution, recv, count, dtype, reduce.op,
                                options.ring_chunk_bytes);
  }
  reduce::scale(recv, shard_count, dtype, postscale);
}

void allgather(Context& ctx, Tag tag, const void* send, void* recv, size_t count, DataType dtype,
               const CollectiveOptions& options) {
  allgatherv(ctx, tag, send, recv, std::vector<size_t>(ctx.size(), count), dtype, options);
}

void allgatherv(Context& ctx, Tag tag, const void* send, void* recv,
                const std::vector<size_t>& counts, DataType dtype,
                const CollectiveOptions& options) {
  const int size = ctx.size();
  check_counts(counts, size, "allgatherv counts");
  const std::vector<ByteRange> ranges = packed_ranges(counts, dtype_size(dtype));
  const ByteRange& own = ranges[ctx.rank()];
  // Accepts both in-place conventions: send already at its place in recv,
  // or send == recv (moved to its place before anything arrives).
  copy_if_distinct(detail::at(recv, own.offset), send, own.length);
  if (size == 1) return;
  const size_t total = ranges.back().offset + ranges.back().length;
  if (total == 0) return;
  detail::allgather_ring(ctx, tag, recv, ranges, options.ring_chunk_bytes);
}

void broadcast(Context& ctx, Tag tag, void* data, size_t count, DataType dtype, int root,
               const CollectiveOptions& options) {
  const int size = ctx.size();
  if (root < 0 || root >= size)
    throw InvalidArgument(fmt::format("broadcast root {} is not a rank of {}", root, size));
  const size_t bytes = count * dtype_size(dtype);
  if (size == 1 || bytes == 0) return;
  if (pick_broadcast(options, bytes) == BroadcastAlgorithm::kTree)
    detail::broadcast_tree(ctx, tag, data, bytes, root);
  else
    detail::broadcast_pipelined(ctx, tag, data, bytes, root, options.broadcast_chunk_bytes);
}

void alltoall(Context& ctx, Tag tag, const void* send, void* recv, size_t count, DataType dtype,
              const CollectiveOptions& options) {
  const std::vector<size_t> counts(ctx.size(), count);
  alltoallv(ctx, tag, send, counts, recv, counts, dtype, options);
}

AlltoallBlocks alltoallv_blocks(int size, int rank, const std::vector<size_t>& send_counts,
                                const std::vector<size_t>& recv_counts, DataType dtype) {
  check_counts(send_counts, size, "alltoallv send_counts");
  check_counts(recv_counts, size, "alltoallv recv_counts");
  if (send_counts[rank] != recv_counts[rank])
    throw InvalidArgument(fmt::format("alltoallv: rank {} sends itself {} elements but expects {}",
                                      rank, send_counts[rank], recv_counts[rank]));
  const size_t element = dtype_size(dtype);
  return {packed_ranges(send_counts, element), packed_ranges(recv_counts, element)};
}

void alltoallv(Context& ctx, Tag tag, const void* send, const std::vector<size_t>& send_counts,
               void* recv, const std::vector<size_t>& recv_counts, DataType dtype,
               const CollectiveOptions& options) {
  const AlltoallBlocks blocks =
      alltoallv_blocks(ctx.size(), ctx.rank(), send_counts, recv_counts, dtype);
  detail::alltoallv_pairwise(ctx, tag, send, blocks.send, recv, blocks.recv);
}

void barrier(Context& ctx, Tag tag, const CollectiveOptions& options) {
  if (ctx.size() > 1) detail::barrier_dissemination(ctx, tag);
}

}  // namespace kolo::collectives
