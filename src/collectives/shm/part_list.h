// A message scattered over several tensors (FusedParts), read as one array
// of elements: what the shared-memory reduce rounds copy from and to. A plain
// message is one part. Internal to src/collectives/shm.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "collectives/fused_part.h"

namespace kolo::collectives::shm::internal {

class PartList {
 public:
  PartList(const std::vector<FusedPart>& parts, size_t element) : parts_(parts), element_(element) {
    for (const FusedPart& p : parts_) {
      starts_.push_back(total_);
      total_ += p.count;
    }
  }
  size_t total() const { return total_; }

  // Copies elements [first, first + count) of the inputs to dst; a part
  // without input reads as zeros.
  void read(size_t first, size_t count, std::byte* dst) const {
    visit(first, count, [&](const FusedPart& p, size_t at, size_t n, size_t done) {
      std::byte* to = dst + done * element_;
      if (p.input == nullptr) {
        std::memset(to, 0, n * element_);
      } else {
        std::memcpy(to, static_cast<const std::byte*>(p.input) + at * element_, n * element_);
      }
    });
  }
  // Copies src to elements [first, first + count) of the outputs with
  // `copy` (memcpy semantics); parts without output are skipped.
  template <typename Copy>
  void write(size_t first, size_t count, const std::byte* src, Copy&& copy) const {
    visit(first, count, [&](const FusedPart& p, size_t at, size_t n, size_t done) {
      if (p.output != nullptr)
        copy(static_cast<std::byte*>(p.output) + at * element_, src + done * element_,
             n * element_);
    });
  }
  // Whether every part under elements [first, first + count) has an input
  // (a part without one reads as zeros).
  bool inputs_present(size_t first, size_t count) const {
    bool present = true;
    visit(first, count, [&](const FusedPart& p, size_t, size_t, size_t) {
      present = present && p.input != nullptr;
    });
    return present;
  }
  // fn(input, elements, elements done before) for the pieces of inputs
  // [first, first + count), each lying in one part; inputs_present() first.
  template <typename Fn>
  void visit_inputs(size_t first, size_t count, Fn&& fn) const {
    visit(first, count, [&](const FusedPart& p, size_t at, size_t n, size_t done) {
      fn(static_cast<const std::byte*>(p.input) + at * element_, n, done);
    });
  }
  // Where elements [first, first + count) lie whole in one part's input or
  // output; null when they span parts or the part has none.
  const std::byte* contiguous_input(size_t first, size_t count) const {
    const FusedPart* p = holder(first, count);
    return p && p->input
               ? static_cast<const std::byte*>(p->input) + (first - start_of(*p)) * element_
               : nullptr;
  }
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
  // pieces of [first, first + count).
  template <typename Fn>
  void visit(size_t first, size_t count, Fn&& fn) const {
    if (count == 0) return;
    size_t i = index_of(first);
    for (size_t done = 0; done < count; ++i) {
      const FusedPart& p = parts_[i];
      const size_t at = first + done - starts_[i];
      const size_t n = std::min(p.count - at, count - done);
      if (n > 0) fn(p, at, n, done);
      done += n;
    }
  }

  const std::vector<FusedPart>& parts_;
  const size_t element_;
  std::vector<size_t> starts_;
  size_t total_ = 0;
};

}  // namespace kolo::collectives::shm::internal
