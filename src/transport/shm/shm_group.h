// ShmGroup: the ranks of one host over one shared segment, the
// implementation of transport::SharedMemoryGroup (shared_memory_group.h says
// what phases, slots and direct reads promise).
//
// Layout of the segment: a header (magic, abort flag and reason), then one
// cache line per member with its sequence word (and its published address),
// then two staging buffers ("slots") per member.
//
// - A wait spins for ShmOptions::spin, then sleeps on the word's futex;
//   advance() wakes sleepers only when there are any, so a phase on an idle
//   pair of cores costs no system call.
// - retire_slot(b) costs no phase of its own: it records this member's next
//   advance, which comes after the reads in program order. That advance is
//   made by the window in between (each window advances at least once)
//   before b is acquired again, so an operation of one window costs one
//   phase: on a pair of cores that is one cache-line hand-off per call.
// - Direct reads use process_vm_readv (ShmOptions::single_copy says when).
//
// Failure: a wait fails with PeerLostError when the member's process is gone,
// TimeoutError after op_timeout, AbortedError when any member called
// abort(). Every failure poisons the group for good (phases are out of step
// afterwards) and is told to the other members through the header.
//
// `final`: the backend, which holds the concrete type, calls it without
// virtual dispatch; the collectives see only the interface.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "transport/shared_memory_group.h"
#include "transport/shm/shm_options.h"
#include "transport/shm/shm_segment.h"

namespace kolo::transport::shm {

class ShmGroup final : public SharedMemoryGroup {
 public:
  // Bytes of the segment for `size` members.
  static size_t segment_bytes(int size, size_t slot_bytes);

  // Writes the header and zeroes the sequence words of a fresh segment; the
  // member that created it calls this before naming it to the others.
  static void format(ShmSegment& segment, int size);

  // `segment` is mapped already and formatted. names[m] says how errors
  // name member m ("rank 3 (host b)"), pids[m] is its process id (for the
  // liveness check; members in another pid namespace are not checked).
  // `health`, when set, runs every sleep slice of a wait and may throw to end
  // it: the backend passes its TCP context's check, whose heartbeats notice
  // a peer that is stopped or wedged (alive, so the pid check passes).
  ShmGroup(ShmSegment segment, int rank, std::vector<std::string> names, std::vector<pid_t> pids,
           const ShmOptions& options, std::function<void()> health = {});
  ShmGroup(const ShmGroup&) = delete;
  ShmGroup& operator=(const ShmGroup&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return static_cast<int>(names_.size()); }
  size_t slot_bytes() const override { return options_.slot_bytes; }
  size_t tile_bytes() const override { return options_.tile_bytes; }
  size_t streaming_bytes() const override { return options_.streaming_bytes; }
  const std::string& member_name(int member) const override { return names_[member]; }
  ShmSegment& segment() { return segment_; }

  std::byte* slot(int member, int buffer) const override;

  uint32_t advance() override;
  void wait_all(uint32_t value) override;
  void wait_member(int member, uint32_t value) override;
  int next_buffer() override { return next_buffer_ ^= 1; }
  void acquire_slot(int buffer) override;
  void retire_slot(int buffer) override { slot_retired_at_[buffer] = seq_ + 1; }

  // From ShmOptions::single_copy and direct_reads_work, as set-up left them.
  bool single_copy() const override { return options_.single_copy == SingleCopy::kOn; }
  bool direct_reads() const override { return single_copy() || options_.direct_reads_work; }
  size_t single_copy_bytes() const override { return options_.single_copy_bytes; }
  void publish_address(uintptr_t address) override;
  void read_member(int member, size_t offset, void* local, size_t bytes) const override;

  void check_usable() const override;
  // Poisons the group with `reason` and tells every member.
  void abort(const std::string& reason);
  void poison(std::exception_ptr error) override;

 private:
  struct Header;
  struct Control;
  Header& header() const;
  Control& control(int member) const;
  void throw_if_aborted() const;
  void check_alive(int member) const;
  [[noreturn]] void fail_timeout(int member, uint32_t value) const;
  void wake_everyone() const;

  ShmSegment segment_;
  const int rank_;
  const std::vector<std::string> names_;
  const std::vector<pid_t> pids_;
  std::vector<bool> pid_visible_;
  const ShmOptions options_;
  const std::function<void()> health_;
  std::byte* slots_ = nullptr;
  uint32_t seq_ = 0;  // our own word's value
  uint32_t slot_retired_at_[2] = {0, 0};
  int next_buffer_ = 1;  // next_buffer() flips it first: the first window uses buffer 0
  std::exception_ptr error_;
};

}  // namespace kolo::transport::shm
