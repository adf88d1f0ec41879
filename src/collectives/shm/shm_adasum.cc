// Adasum through one host's shared memory (see shm_collectives.h): the
// algorithm of collectives/adasum/adasum.cc, unchanged, over adasum::Links
// that move its data through the members' slots instead of messages. The
// arithmetic is the same in the same order, so the results are the same
// bits as over TCP.
//
// An exchange moves a window in rounds of one slot: each member copies its
// part of the round into its slot, advances, waits for its partner's
// advance and copies the partner's part out. Every member takes
// ceil(bound / slot) rounds (the bound is the same on all), so the phases
// line up even where a member has less or nothing to move. Summing the dot
// products and norms takes one round per slot of doubles: each member
// publishes its values and adds the group's in the order of recursive
// doubling, which is what every member of the TCP path ends with.
#include <algorithm>
#include <cstring>

#include "collectives/adasum/adasum.h"
#include "collectives/adasum/adasum_links.h"
#include "collectives/shm/shm_collectives.h"
#include "collectives/shm/shm_internal.h"
#include "common/error.h"

namespace kolo::collectives::shm {
namespace {

class SlotLinks final : public adasum::Links {
 public:
  explicit SlotLinks(SharedMemoryGroup& group) : group_(group) {}
  int rank() const override { return group_.rank(); }
  int size() const override { return group_.size(); }

  void exchange(int peer, const void* send, size_t send_bytes, void* recv, size_t recv_bytes,
                size_t bound_bytes) override {
    const size_t slot = group_.slot_bytes();
    const auto* from = static_cast<const std::byte*>(send);
    auto* to = static_cast<std::byte*>(recv);
    for (size_t at = 0; at < bound_bytes; at += slot) {
      const int buffer = group_.next_buffer();
      group_.acquire_slot(buffer);
      if (at < send_bytes)
        std::memcpy(group_.slot(rank(), buffer), from + at, std::min(slot, send_bytes - at));
      const uint32_t phase = group_.advance();
      if (at < recv_bytes) {
        group_.wait_member(peer, phase);
        std::memcpy(to + at, group_.slot(peer, buffer), std::min(slot, recv_bytes - at));
      }
      group_.retire_slot(buffer);
    }
  }

  void sum_within_group(std::vector<double>& values, int group) override {
    if (group <= 1) return;
    const int first = rank() & ~(group - 1);
    const size_t per_round = std::max<size_t>(1, group_.slot_bytes() / sizeof(double));
    std::vector<double> tree(static_cast<size_t>(group));
    for (size_t at = 0; at < values.size(); at += per_round) {
      const size_t count = std::min(per_round, values.size() - at);
      const int buffer = group_.next_buffer();
      group_.acquire_slot(buffer);
      std::memcpy(group_.slot(rank(), buffer), values.data() + at, count * sizeof(double));
      const uint32_t phase = group_.advance();
      for (int m = first; m < first + group; ++m)
        if (m != rank()) group_.wait_member(m, phase);
      for (size_t i = 0; i < count; ++i) {
        for (int m = 0; m < group; ++m)
          std::memcpy(&tree[static_cast<size_t>(m)],
                      group_.slot(first + m, buffer) + (i * sizeof(double)), sizeof(double));
        // Neighbours first, then pairs of pairs: recursive doubling's order.
        for (size_t width = tree.size(); width > 1; width /= 2)
          for (size_t j = 0; j < width / 2; ++j) tree[j] = tree[2 * j] + tree[2 * j + 1];
        values[at + i] = tree[0];
      }
      group_.retire_slot(buffer);
    }
  }

 private:
  SharedMemoryGroup& group_;
};

}  // namespace

void adasum_allreduce(SharedMemoryGroup& group, const std::vector<FusedPart>& parts, DataType dtype,
                      const Reduction& reduce) {
  // Refused before any phase, so the group stays usable.
  if (const auto problem = adasum_size_problem(group.size()); !problem.empty())
    throw InvalidArgument(problem);
  internal::guarded(group, [&] {
    SlotLinks links(group);
    adasum::allreduce_over(links, parts, dtype, reduce);
  });
}

}  // namespace kolo::collectives::shm
