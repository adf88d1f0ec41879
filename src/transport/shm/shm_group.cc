#include "transport/shm/shm_group.h"

#include <fmt/format.h>
#include <sched.h>
#include <signal.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <new>
#include <string>

#include "common/error.h"
#include "transport/shm/futex.h"
#include "transport/shm/process_memory.h"

namespace kolo::transport::shm {
namespace {

using Clock = std::chrono::steady_clock;

constexpr uint64_t kMagic = 0x6b6f6c6f73686d31ULL;  // "koloshm1"
constexpr size_t kHeaderBytes = 4096;
constexpr size_t kControlBytes =
    128;  // two cache lines: no false sharing with a neighbour's prefetch
constexpr size_t kPage = 4096;
constexpr uint32_t kAbortClaimed = 1;
constexpr uint32_t kAbortReady = 2;
// A sleeping waiter wakes this often to check for a dead peer or an abort
// whose wake-up it missed.
constexpr std::chrono::microseconds kSleepSlice{50'000};

size_t round_up(size_t value, size_t to) {
  return (value + to - 1) / to * to;
}

size_t controls_end(int size) {
  return kHeaderBytes + static_cast<size_t>(size) * kControlBytes;
}

// Sequence values wrap; "a reached b" compares within half the range.
bool reached(uint32_t current, uint32_t target) {
  return static_cast<int32_t>(current - target) >= 0;
}

void cpu_relax() {
  __builtin_ia32_pause();
}

// A process that exited is gone (ESRCH) or a zombie its parent has not
// reaped yet (state Z or X in /proc/<pid>/stat), which kill() still finds.
bool process_running(pid_t pid) {
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  std::ifstream stat(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(stat, line)) return true;  // no /proc: trust kill()
  size_t close = line.rfind(')');              // the command name may hold spaces and parentheses
  if (close == std::string::npos || close + 2 >= line.size()) return true;
  char state = line[close + 2];
  return state != 'Z' && state != 'X';
}

}  // namespace

struct ShmGroup::Header {
  uint64_t magic;
  uint32_t size;
  std::atomic<uint32_t> aborted;  // 0, kAbortClaimed, kAbortReady
  int32_t abort_origin;
  char abort_reason[1024];
};

struct alignas(64) ShmGroup::Control {
  std::atomic<uint32_t> seq;
  std::atomic<uint32_t> sleepers;  // waiters inside futex_wait on seq
  // The member's published buffer (publish_address), in its address space;
  // on seq's cache line, so readers get it with the phase that announces it.
  std::atomic<uint64_t> address;
};

size_t ShmGroup::segment_bytes(int size, size_t slot_bytes) {
  return round_up(controls_end(size), kPage) +
         static_cast<size_t>(size) * 2 * round_up(slot_bytes, kPage);
}

ShmGroup::ShmGroup(ShmSegment segment, int rank, std::vector<std::string> names,
                   std::vector<pid_t> pids, const ShmOptions& options, std::function<void()> health)
    : segment_(std::move(segment)),
      rank_(rank),
      names_(std::move(names)),
      pids_(std::move(pids)),
      options_(options),
      health_(std::move(health)) {
  const int n = size();
  if (segment_.size() < segment_bytes(n, options_.slot_bytes))
    throw InvalidArgument(fmt::format("shared memory segment of {} bytes is too small for {} ranks",
                                      segment_.size(), n));
  auto* base = static_cast<std::byte*>(segment_.data());
  if (header().magic != kMagic || header().size != static_cast<uint32_t>(n)) {
    throw IoError(
        fmt::format("shared memory {} is not a Kolo segment for {} ranks", segment_.name(), n));
  }
  slots_ = base + round_up(controls_end(n), kPage);
  pid_visible_.resize(static_cast<size_t>(n));
  for (int m = 0; m < n; ++m) pid_visible_[m] = ::kill(pids_[m], 0) == 0 || errno == EPERM;
}

void ShmGroup::format(ShmSegment& segment, int size) {
  static_assert(sizeof(Header) <= kHeaderBytes);
  if (segment.size() < controls_end(size))
    throw InvalidArgument("shared memory segment too small to format");
  auto* base = static_cast<std::byte*>(segment.data());
  auto* h = new (base) Header{};
  h->magic = kMagic;
  h->size = static_cast<uint32_t>(size);
  for (int m = 0; m < size; ++m)
    new (base + kHeaderBytes + static_cast<size_t>(m) * kControlBytes) Control{};
}

ShmGroup::Header& ShmGroup::header() const {
  return *static_cast<Header*>(segment_.data());
}

ShmGroup::Control& ShmGroup::control(int member) const {
  auto* base = static_cast<std::byte*>(segment_.data());
  return *reinterpret_cast<Control*>(base + kHeaderBytes +
                                     static_cast<size_t>(member) * kControlBytes);
}

std::byte* ShmGroup::slot(int member, int buffer) const {
  const size_t stride = round_up(options_.slot_bytes, kPage);
  return slots_ + (static_cast<size_t>(member) * 2 + static_cast<size_t>(buffer)) * stride;
}

uint32_t ShmGroup::advance() {
  Control& own = control(rank_);
  own.seq.store(++seq_, std::memory_order_seq_cst);
  // Pairs with the waiter's sleepers increment and re-check (both seq_cst):
  // either it sees the new value or we see it sleeping.
  if (own.sleepers.load(std::memory_order_seq_cst) != 0) futex_wake_all(own.seq);
  return seq_;
}

void ShmGroup::acquire_slot(int buffer) {
  // A retirement waits for our own next advance; taking the same buffer
  // again before making it would wait for everyone forever.
  if (!reached(seq_, slot_retired_at_[buffer]))
    throw InternalError("shared-memory slot reused with no phase since it was retired");
  wait_all(slot_retired_at_[buffer]);
}

void ShmGroup::publish_address(uintptr_t address) {
  // Ordered before the next advance() (a seq_cst store) that announces it.
  control(rank_).address.store(address, std::memory_order_relaxed);
}

void ShmGroup::read_member(int member, size_t offset, void* local, size_t bytes) const {
  const uint64_t remote = control(member).address.load(std::memory_order_relaxed) + offset;
  const int error = read_process_memory(pids_[member], remote, local, bytes);
  if (error == ESRCH)
    throw PeerLostError(
        fmt::format("{} lost: its process (pid {}) exited", names_[member], pids_[member]));
  if (error != 0)
    throw IoError(fmt::format("cannot read {} bytes of the memory of {} (pid {}): {}", bytes,
                              names_[member], pids_[member], std::strerror(error)));
}

void ShmGroup::wait_all(uint32_t value) {
  for (int m = 0; m < size(); ++m) {
    if (m != rank_) wait_member(m, value);
  }
}

void ShmGroup::wait_member(int member, uint32_t value) {
  Control& c = control(member);
  if (reached(c.seq.load(std::memory_order_acquire), value)) return;
  const auto start = Clock::now();
  // Spin: a few microseconds of pause only (the pair on two idle cores
  // answers well within that), then yield between looks, so that a rank
  // sharing its core with the one it waits for (ranks outnumbering cores,
  // or the scheduler placing both on one core) lets it run at once. A
  // pause costs ~140 cycles on recent Intel cores: 256 rounds of 16 pauses
  // before the first yield made every phase on a shared core ~50 us.
  for (int i = 0;; ++i) {
    for (int k = 0; k < 4; ++k) cpu_relax();
    if (reached(c.seq.load(std::memory_order_acquire), value)) return;
    if (i >= 8) ::sched_yield();
    if ((i & 15) == 15) {
      throw_if_aborted();
      if (Clock::now() - start > options_.spin) break;
    }
  }
  const auto deadline = start + options_.op_timeout;
  for (;;) {
    c.sleepers.fetch_add(1, std::memory_order_seq_cst);
    uint32_t seen = c.seq.load(std::memory_order_seq_cst);
    if (!reached(seen, value)) futex_wait(c.seq, seen, kSleepSlice);
    c.sleepers.fetch_sub(1, std::memory_order_seq_cst);
    if (reached(c.seq.load(std::memory_order_acquire), value)) return;
    throw_if_aborted();
    check_alive(member);
    if (health_) health_();
    if (Clock::now() > deadline) fail_timeout(member, value);
  }
}

void ShmGroup::check_usable() const {
  if (error_) std::rethrow_exception(error_);
  throw_if_aborted();
}

void ShmGroup::throw_if_aborted() const {
  Header& h = header();
  uint32_t state = h.aborted.load(std::memory_order_acquire);
  if (state == 0) return;
  // A claimant writes the reason right after claiming; wait for it briefly.
  for (int i = 0; i < 100000 && state != kAbortReady; ++i) {
    cpu_relax();
    state = h.aborted.load(std::memory_order_acquire);
  }
  std::string reason(h.abort_reason, ::strnlen(h.abort_reason, sizeof h.abort_reason));
  if (h.abort_origin == rank_) throw AbortedError(reason);
  throw AbortedError(
      fmt::format("{} aborted: {}", names_.at(static_cast<size_t>(h.abort_origin)), reason));
}

void ShmGroup::check_alive(int member) const {
  if (!pid_visible_[member]) return;
  if (!process_running(pids_[member]))
    throw PeerLostError(
        fmt::format("{} lost: its process (pid {}) exited", names_[member], pids_[member]));
}

void ShmGroup::fail_timeout(int member, uint32_t value) const {
  throw TimeoutError(fmt::format(
      "{} did not reach shared-memory phase {} within {} s (it is at {})", names_[member], value,
      options_.op_timeout.count() / 1000.0, control(member).seq.load()));
}

void ShmGroup::abort(const std::string& reason) {
  Header& h = header();
  uint32_t expected = 0;
  if (h.aborted.compare_exchange_strong(expected, kAbortClaimed)) {
    h.abort_origin = rank_;
    size_t length = std::min(reason.size(), sizeof h.abort_reason - 1);
    std::memcpy(h.abort_reason, reason.data(), length);
    h.abort_reason[length] = '\0';
    h.aborted.store(kAbortReady, std::memory_order_release);
  }
  if (!error_) error_ = std::make_exception_ptr(AbortedError(reason));
  wake_everyone();
}

void ShmGroup::poison(std::exception_ptr error) {
  if (error_) return;
  abort(message_of(error));
  error_ = error;
}

void ShmGroup::wake_everyone() const {
  for (int m = 0; m < size(); ++m) futex_wake_all(control(m).seq);
}

}  // namespace kolo::transport::shm
