// A message scattered over several tensors (FusedParts), read as one array
// of elements: what the shared-memory reduce rounds copy from and to. A plain
// message is one part. Internal to src/collectives/shm.
//
// Each part may start at a multiple of `align` elements in that array, with
// a gap of padding before it: a gap reads as zeros, is never written and
// holds no input. Were the parts packed, every part after one whose size is
// not a multiple of the cache line would sit at another offset within a line
// in the staging slots than in its tensor, and every copy and reduction of
// it would straddle lines (160 such tensors of 102 MB in all took
// 1.11-1.18x one raw allreduce of their total packed, 0.95-1.02x aligned:
// docs/benchmarks.md, Engine).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "collectives/fused_part.h"

namespace kolo::collectives::shm::internal {

class PartList {
 public:
  // `align`: in elements; 1 packs the parts (the layout reduce-scatter's
  // shards are defined by).
  PartList(const std::vector<FusedPart>& parts, size_t element, size_t align = 1)
      : parts_(parts), element_(element) {
    for (const FusedPart& p : parts_) {
      const size_t start = p.count == 0 ? total_ : (total_ + align - 1) / align * align;
      starts_.push_back(start);
      total_ = start + p.count;
    }
  }
  size_t total() const { return total_; }

  // Copies elements [first, first + count) of the inputs to dst; a part
  // without input, and a gap, read as zeros.
  void read(size_t first, size_t count, std::byte* dst) const {
    visit(first, count, [&](const FusedPart* p, size_t at, size_t n, size_t done) {
      std::byte* to = dst + done * element_;
      if (p == nullptr || p->input == nullptr) {
        std::memset(to, 0, n * element_);
      } else {
        std::memcpy(to, static_cast<const std::byte*>(p->input) + at * element_, n * element_);
      }
    });
  }
  // Copies src to elements [first, first + count) of the outputs with
  // `copy` (memcpy semantics); parts without output, and gaps, are skipped.
  template <typename Copy>
  void write(size_t first, size_t count, const std::byte* src, Copy&& copy) const {
    visit(first, count, [&](const FusedPart* p, size_t at, size_t n, size_t done) {
      if (p != nullptr && p->output != nullptr)
        copy(static_cast<std::byte*>(p->output) + at * element_, src + done * element_,
             n * element_);
    });
  }
  // Whether every part under elements [first, first + count) has an input
  // (a part without one reads as zeros). Gaps do not count: nothing reads
  // their results.
  bool inputs_present(size_t first, size_t count) const {
    bool present = true;
    visit(first, count, [&](const FusedPart* p, size_t, size_t, size_t) {
      present = present && (p == nullptr || p->input != nullptr);
    });
    return present;
  }
  // fn(input, elements, elements done before) for the pieces of inputs
  // [first, first + count), each lying in one part; gaps are passed over
  // (what is computed there is written nowhere). inputs_present() first.
  template <typename Fn>
  void visit_inputs(size_t first, size_t count, Fn&& fn) const {
    visit(first, count, [&](const FusedPart* p, size_t at, size_t n, size_t done) {
      if (p != nullptr) fn(static_cast<const std::byte*>(p->input) + at * element_, n, done);
    });
  }
  // Where elements [first, first + count) lie whole in one part's output;
  // null when they span parts or the part has none.
  std::byte* contiguous_output(size_t first, size_t count) const {
    const FusedPart* p = holder(first, count);
    return p && p->output ? static_cast<std::byte*>(p->output) + (first - start_of(*p)) * element_
                          : nullptr;
  }

 private:
  size_t index_of(size_t element) const {
    return static_cast<size_t>(std::upper_bound(starts_.begin(), starts_.end(), element) -
                               starts_.begin()) -
           1;
  }
  size_t start_of(const FusedPart& p) const {
    return starts_[static_cast<size_t>(&p - parts_.data())];
  }
  const FusedPart* holder(size_t first, size_t count) const {
    if (count == 0) return nullptr;
    const size_t i = index_of(first);
    return first - starts_[i] + count <= parts_[i].count ? &parts_[i] : nullptr;
  }
  // fn(part, element within it, elements, elements done before) for the
  // pieces of [first, first + count); a gap's piece has no part (null).
  template <typename Fn>
  void visit(size_t first, size_t count, Fn&& fn) const {
    if (count == 0) return;
    size_t i = index_of(first);
    for (size_t done = 0; done < count;) {
      const size_t position = first + done;
      const FusedPart& p = parts_[i];
      const size_t end = starts_[i] + p.count;
      if (position < end) {
        const size_t n = std::min(end - position, count - done);
        fn(&p, position - starts_[i], n, done);
        done += n;
      }
      // The gap up to the next part's start.
      const size_t next = i + 1 < parts_.size() ? starts_[i + 1] : total_;
      if (done < count && first + done < next) {
        const size_t n = std::min(next - (first + done), count - done);
        fn(nullptr, 0, n, done);
        done += n;
      }
      ++i;
    }
  }

  const std::vector<FusedPart>& parts_;
  const size_t element_;
  std::vector<size_t> starts_;
  size_t total_ = 0;
};

}  // namespace kolo::collectives::shm::internal
