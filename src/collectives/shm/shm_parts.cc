// Shared-memory allreduce of several tensors as one (see shm_collectives.h).
// The rounds of shm_reduce.cc, with the message scattered over the parts:
// every member copies all shards of a round from the parts into its slot
// (applying prescale there; its own shard only when it spans parts or needs
// scaling, else it is read in place), reduces its shard across
// the slots, and everyone copies the reduced shards back out to the parts.
// Those two copies are the ones a fusion buffer would need anyway.
#include <algorithm>
#include <cstring>

#include "collectives/reduce/reduce.h"
#include "collectives/shm/shm_collectives.h"
#include "collectives/shm/shm_internal.h"

namespace kolo::collectives::shm {
namespace {

using internal::guarded;
using internal::ShardLayout;

// The parts read as one array of elements.
class PartList {
 public:
  PartList(const std::vector<Part>& parts, size_t element) : parts_(parts), element_(element) {
    size_t begin = 0;
    for (const Part& p : parts_) {
      starts_.push_back(begin);
      begin += p.count;
    }
    total_ = begin;
  }
  size_t total() const { return total_; }

  // Copies elements [first, first + count) of the inputs to dst.
  void read(size_t first, size_t count, std::byte* dst) const {
    visit(first, count, [&](const Part& p, size_t at, size_t n, size_t done) {
      std::byte* to = dst + done * element_;
      if (p.input == nullptr) {
        std::memset(to, 0, n * element_);
      } else {
        std::memcpy(to, static_cast<const std::byte*>(p.input) + at * element_, n * element_);
      }
    });
  }
  // The input holding elements [first, first + count) whole, or null when
  // they span parts or the part has no input.
  const std::byte* contiguous_input(size_t first, size_t count) const {
    if (count == 0) return nullptr;
    size_t i = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), first) - starts_.begin()) - 1;
    const Part& p = parts_[i];
    const size_t at = first - starts_[i];
    if (p.input == nullptr || at + count > p.count) return nullptr;
    return static_cast<const std::byte*>(p.input) + at * element_;
  }
  // Copies src to elements [first, first + count) of the outputs.
  void write(size_t first, size_t count, const std::byte* src) const {
    visit(first, count, [&](const Part& p, size_t at, size_t n, size_t done) {
      if (p.output == nullptr) return;  // nobody wants this part here (a joined rank)
      std::memcpy(static_cast<std::byte*>(p.output) + at * element_, src + done * element_, n * element_);
    });
  }

 private:
  // fn(part, element within it, elements, elements done before) for the
  // pieces of [first, first + count).
  template <typename Fn>
  void visit(size_t first, size_t count, Fn&& fn) const {
    if (count == 0) return;
    size_t i = static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), first) - starts_.begin()) - 1;
    size_t done = 0;
    while (done < count) {
      const Part& p = parts_[i];
      const size_t at = first + done - starts_[i];
      const size_t n = std::min(p.count - at, count - done);
      if (n > 0) fn(p, at, n, done);
      done += n;
      ++i;
    }
  }

  const std::vector<Part>& parts_;
  const size_t element_;
  std::vector<size_t> starts_;
  size_t total_ = 0;
};

}  // namespace

void allreduce_parts(ShmGroup& group, const std::vector<Part>& parts, DataType dtype, ReduceOp op,
                     double prescale, double postscale) {
  const PartList list(parts, dtype_size(dtype));
  if (list.total() == 0) return;
  guarded(group, [&] {
    const int n = group.size();
    const int r = group.rank();
    const ShardLayout layout(list.total(), n, dtype, group.slot_bytes());
    for (size_t k = 0; k < layout.rounds; ++k) {
      const int buffer = static_cast<int>(k % 2);
      group.acquire_slot(buffer);
      std::byte* mine = group.slot(r, buffer);
      // This member's own chunk is read in place when one part holds it
      // (the common case: chunks are small next to gradient tensors),
      // saving its copy into the slot.
      const size_t length = layout.chunk_count(r, k);
      const std::byte* own = prescale == 1.0 ? list.contiguous_input(layout.chunk_begin(r, k), length) : nullptr;
      for (int j = 0; j < n; ++j) {
        if (j == r && own != nullptr) continue;
        std::byte* sub = mine + layout.sub_block(j);
        list.read(layout.chunk_begin(j, k), layout.chunk_count(j, k), sub);
        reduce::scale(sub, layout.chunk_count(j, k), dtype, prescale);
      }
      group.wait_all(group.advance());

      std::byte* dst = mine + layout.sub_block(r);
      bool first = own != nullptr;
      for (int q = 0; q < n; ++q) {
        if (q == r) continue;
        const std::byte* theirs = group.slot(q, buffer) + layout.sub_block(r);
        if (first) {
          reduce::reduce(dst, own, theirs, length, dtype, op);
          first = false;
        } else {
          reduce::reduce_into(dst, theirs, length, dtype, op);
        }
      }
      reduce::scale(dst, length, dtype, postscale);
      group.wait_all(group.advance());

      for (int j = 0; j < n; ++j)
        list.write(layout.chunk_begin(j, k), layout.chunk_count(j, k), group.slot(j, buffer) + layout.sub_block(j));
      group.retire_slot(buffer, group.advance());
    }
  });
}

}  // namespace kolo::collectives::shm
