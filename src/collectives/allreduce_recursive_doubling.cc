#include "collectives/algorithm_util.h"
#include "collectives/reduce/reduce.h"

namespace kolo::collectives::detail {

void allreduce_recursive_doubling(Context& ctx, Tag tag, void* data, size_t count, DataType dtype,
                                  ReduceOp op) {
  const int rank = ctx.rank();
  const int size = ctx.size();
  const size_t bytes = count * dtype_size(dtype);

  int power_of_two = 1;
  while (power_of_two * 2 <= size) power_of_two *= 2;
  // The first 2*extra ranks form (even, odd) pairs; the odd rank carries the
  // pair through the doubling rounds, so exactly power_of_two ranks remain.
  const int extra = size - power_of_two;
  const bool paired = rank < 2 * extra;

  auto incoming = scratch_bytes(bytes);

  if (paired && rank % 2 == 0) {
    ctx.send(rank + 1, tag, data, bytes);
    ctx.recv(rank + 1, tag, data, bytes);  // the final result
    return;
  }
  if (paired) {
    ctx.recv(rank - 1, tag, incoming.get(), bytes);
    reduce::reduce_into(data, incoming.get(), count, dtype, op);
  }

  // Ranks taking part in the rounds are renumbered 0..power_of_two-1.
  const int virtual_rank = paired ? rank / 2 : rank - extra;
  auto real_rank = [extra](int v) { return v < extra ? 2 * v + 1 : v + extra; };

  for (int mask = 1; mask < power_of_two; mask <<= 1) {
    const int peer = real_rank(virtual_rank ^ mask);
    auto received = ctx.irecv(peer, tag, incoming.get(), bytes);
    auto sent = ctx.isend(peer, tag, data, bytes);
    // `data` may change only after the send has finished with it.
    sent->wait();
    received->wait();
    // Both partners combine the same two operands (in opposite order; every
    // operator is commutative), so they agree on the result bit for bit.
    reduce::reduce_into(data, incoming.get(), count, dtype, op);
  }

  if (paired) ctx.send(rank - 1, tag, data, bytes);
}

}  // namespace kolo::collectives::detail
