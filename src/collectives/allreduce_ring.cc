#include "collectives/algorithm_util.h"
#include "collectives/collectives.h"
#include "collectives/reduce/reduce.h"

namespace kolo::collectives::detail {

// Reduce-scatter leaves each rank with one fully reduced shard; the
// allgather then circulates the shards. Both phases use the same tag: the
// allgather's messages from the left neighbour queue behind the
// reduce-scatter's, which have all been consumed when it starts.
void allreduce_ring(Context& ctx, Tag tag, const void* src, void* dst, size_t count,
                    DataType dtype, ReduceOp op, double postscale, size_t chunk_bytes) {
  const int rank = ctx.rank();
  const int size = ctx.size();
  const size_t element = dtype_size(dtype);

  std::vector<ByteRange> shards(size);
  for (int r = 0; r < size; ++r)
    shards[r] = {reduce_scatter_offset(count, size, r) * element,
                 reduce_scatter_count(count, size, r) * element};
  const ByteRange& own = shards[rank];

  // reduce_scatter_ring waits for its sends before returning, so the
  // allgather may overwrite the parts of src (when src == dst) it sent.
  reduce_scatter_ring(ctx, tag, src, at(dst, own.offset), count, dtype, op, chunk_bytes);
  // Scaling only the own shard does 1/size of the work, and every rank gets
  // the owner's bits.
  reduce::scale(at(dst, own.offset), own.length / element, dtype, postscale);
  const size_t whole_elements = std::max<size_t>(1, chunk_bytes / element) * element;
  allgather_ring(ctx, tag, dst, shards, whole_elements);
}

}  // namespace kolo::collectives::detail
