// Shared-memory alltoallv (see shm_collectives.h).
//
// No member knows the whole exchange up front (each knows what it sends
// and what it receives), yet all must run the same phases. So the first
// phase carries a header at the start of every member's slot: the offset
// and length of each block it sends. Once every member has advanced past
// it, each reads all headers and derives the same plan:
// - a block of at least the group's single_copy_bytes(), where the group
//   allows direct reads (direct_reads()), is read by its receiver straight
//   from the sender's buffer (one copy); the sender then keeps its buffer
//   until a last phase says every reader is done;
// - every other block goes through the slots, one sub-block per receiver,
//   in as many rounds as the longest such block needs. Round 0 shares the
//   header's phase, so an alltoall that fits one round costs one phase.
// Round k: each member copies part k of every slot block it sends into the
// receiver's sub-block of its slot, advances, and copies part k of its own
// sub-block of every other member's slot to its recv.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "collectives/shm/shm_collectives.h"
#include "collectives/shm/shm_internal.h"
#include "common/error.h"

namespace kolo::collectives::shm {
namespace {

using internal::guarded;

// One header entry of member m for member j: where m's block for j lies in
// m's send buffer (the offset is what a direct reader adds to the published
// address), and how many bytes m expects from j. With both sides of every
// pair in the headers, every member finds a mismatch, and the same one.
struct BlockEntry {
  uint64_t offset;
  uint64_t length;
  uint64_t expects;
};

// How the exchange is cut. The geometry comes from the group; what all
// members must agree on (rounds, whether anyone reads directly) comes from
// the headers of round 0, which every member reads whole.
class AlltoallPlan {
 public:
  explicit AlltoallPlan(const SharedMemoryGroup& group)
      : n_(group.size()),
        direct_allowed_(group.direct_reads()),
        direct_from_(group.single_copy_bytes()),
        header_bytes_((static_cast<size_t>(n_) * sizeof(BlockEntry) + 63) / 64 * 64) {
    const size_t slot = group.slot_bytes();
    if (2 * header_bytes_ > slot)
      throw InvalidArgument(fmt::format(
          "alltoall through shared memory: slots of {} bytes are too small for {} local "
          "ranks (KOLO_SHM_SLOT_BYTES must be at least {})",
          slot, n_, 2 * header_bytes_));
    // Sub-blocks on cache lines where they are big enough, so two writers
    // never share one.
    const size_t sub = (slot - header_bytes_) / static_cast<size_t>(n_);
    sub_bytes_ = sub >= 64 ? sub / 64 * 64 : sub;
  }

  // From every member's header (header(m) for member m): the rounds the
  // longest slot block needs and whether any block is read directly; throws
  // on the first pair whose lengths disagree (the same pair on every member).
  template <typename Header>
  void agree(const SharedMemoryGroup& group, Header&& header) {
    for (int q = 0; q < n_; ++q) {
      for (int j = 0; j < n_; ++j) {
        if (j == q) continue;
        const uint64_t length = header(q)[j].length;
        const uint64_t expected = header(j)[q].expects;
        if (length != expected)
          throw InvalidArgument(fmt::format("alltoallv: {} sends {} bytes to {}, which expects {}",
                                            group.member_name(q), length, group.member_name(j),
                                            expected));
        any_direct_ = any_direct_ || direct(length);
        if (!direct(length)) rounds_ = std::max(rounds_, (length + sub_bytes_ - 1) / sub_bytes_);
      }
    }
  }

  bool direct(size_t length) const { return direct_allowed_ && length >= direct_from_; }
  size_t rounds() const { return rounds_; }
  bool any_direct() const { return any_direct_; }
  // Part k of a slot block of `length` bytes: offset within it and length.
  ByteRange part(size_t length, size_t k) const {
    const size_t begin = std::min(length, k * sub_bytes_);
    return {begin, std::min(sub_bytes_, length - begin)};
  }
  size_t sub_block(int member) const {
    return header_bytes_ + static_cast<size_t>(member) * sub_bytes_;
  }

 private:
  int n_;
  bool direct_allowed_;
  size_t direct_from_;
  size_t header_bytes_;
  size_t sub_bytes_ = 0;
  size_t rounds_ = 1;  // round 0 always runs: it carries the headers
  bool any_direct_ = false;
};

void exchange(SharedMemoryGroup& group, const std::byte* send,
              const std::vector<ByteRange>& send_blocks, std::byte* recv,
              const std::vector<ByteRange>& recv_blocks) {
  const int n = group.size();
  const int r = group.rank();
  AlltoallPlan plan(group);
  auto header = [&](int member, int buffer) {
    return reinterpret_cast<const BlockEntry*>(group.slot(member, buffer));
  };
  auto copy_in = [&](std::byte* mine, size_t k) {
    for (int j = 0; j < n; ++j) {
      const ByteRange& block = send_blocks[j];
      if (j == r || plan.direct(block.length)) continue;
      const ByteRange piece = plan.part(block.length, k);
      if (piece.length > 0)
        std::memcpy(mine + plan.sub_block(j), send + block.offset + piece.offset, piece.length);
    }
  };
  // Blocks read directly come whole in round 0, from the sender's buffer at
  // the offset its header gives.
  auto copy_out = [&](int buffer, size_t k) {
    for (int step = 1; step < n; ++step) {
      const int q = (r + step) % n;  // members start at different peers: the reads spread out
      const ByteRange& block = recv_blocks[q];
      if (plan.direct(block.length)) {
        if (k == 0)
          group.read_member(q, header(q, buffer)[r].offset, recv + block.offset, block.length);
        continue;
      }
      const ByteRange piece = plan.part(block.length, k);
      if (piece.length > 0)
        std::memcpy(recv + block.offset + piece.offset, group.slot(q, buffer) + plan.sub_block(r),
                    piece.length);
    }
  };

  // plan.rounds() is 1 until round 0's headers are read.
  for (size_t k = 0; k < plan.rounds(); ++k) {
    const int buffer = group.next_buffer();
    group.acquire_slot(buffer);
    std::byte* mine = group.slot(r, buffer);
    if (k == 0) {
      auto* entries = reinterpret_cast<BlockEntry*>(mine);
      for (int j = 0; j < n; ++j)
        entries[j] = {send_blocks[j].offset, j == r ? 0 : send_blocks[j].length,
                      j == r ? 0 : recv_blocks[j].length};
      if (group.direct_reads()) group.publish_address(reinterpret_cast<uintptr_t>(send));
    }
    copy_in(mine, k);
    const uint32_t phase = group.advance();
    if (k == 0) {
      // The own block, while the peers catch up.
      const ByteRange& own = send_blocks[r];
      if (own.length > 0) std::memcpy(recv + recv_blocks[r].offset, send + own.offset, own.length);
    }
    group.wait_all(phase);
    if (k == 0) plan.agree(group, [&](int member) { return header(member, buffer); });
    copy_out(buffer, k);
    group.retire_slot(buffer);
  }
  // Direct readers are done with every sender's buffer once all advanced.
  if (plan.any_direct()) group.wait_all(group.advance());
}

}  // namespace

void alltoallv(SharedMemoryGroup& group, const void* send,
               const std::vector<ByteRange>& send_blocks, void* recv,
               const std::vector<ByteRange>& recv_blocks) {
  guarded(group, [&] {
    exchange(group, static_cast<const std::byte*>(send), send_blocks, static_cast<std::byte*>(recv),
             recv_blocks);
  });
}

}  // namespace kolo::collectives::shm
