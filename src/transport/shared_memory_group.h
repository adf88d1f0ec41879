// The transport interface that the shared-memory collectives
// (src/collectives/shm) are written against, as context.h is for the
// point-to-point ones: the ranks of one host ("members"), which exchange data
// through memory they all map instead of through messages.
//
// Phases order the members:
// - Each member counts its own phases: advance() makes the next one, so
//   "member m reached value v" means m has finished everything it did before
//   its v-th advance. Members run the same collectives in the same order, so
//   the values line up across members without any exchange.
// - wait_all(v) returns once every member reached v; wait_member(m, v) waits
//   for one.
//
// Slots carry the data: every member has two staging buffers of slot_bytes()
// that every member can read. Every window of every collective takes the next
// buffer from next_buffer() (the same on every member, alternating across
// collectives too), and a member done reading the window's slots retires it
// with retire_slot(b): its next advance tells the others so. acquire_slot(b)
// waits until every member has made that advance for the window that last
// used b, i.e. has finished reading what this member put there.
//
// Direct reads ("single copy"): a member publishes the address of one of its
// own buffers, advances, and keeps the buffer unchanged until every reader has
// advanced again; in between the others copy from it with read_member().
//
// Errors come as the exceptions of common/error.h (a member gone, a timeout,
// an abort). Once an operation fails, the members' phases are out of step:
// poison() marks the group unusable for good and tells the others why.
//
// Calls are virtual: collectives make them once per window, chunk or tile,
// never per element. Implementation: shm/shm_group.h (a POSIX segment).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <string>

namespace kolo::transport {

class SharedMemoryGroup {
 public:
  virtual ~SharedMemoryGroup() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  // "rank 3 (host b)": how errors name a member.
  virtual const std::string& member_name(int member) const = 0;

  // Bytes of each slot.
  virtual size_t slot_bytes() const = 0;
  // Reductions work in tiles of this many bytes, each finished while it is
  // still in the cache.
  virtual size_t tile_bytes() const = 0;
  // Outputs of reductions of at least this many bytes are written with
  // streaming (non-temporal) stores.
  virtual size_t streaming_bytes() const = 0;

  // Makes this member's next phase and returns its value.
  virtual uint32_t advance() = 0;
  virtual void wait_all(uint32_t value) = 0;
  virtual void wait_member(int member, uint32_t value) = 0;

  // Buffer `buffer` (0 or 1) of `member`.
  virtual std::byte* slot(int member, int buffer) const = 0;
  // The buffer for the next window; all members take them in the same order.
  virtual int next_buffer() = 0;
  // Waits until every member has retired the window that last used `buffer`.
  virtual void acquire_slot(int buffer) = 0;
  // This member has finished reading the slots of the window that used
  // `buffer`; costs no phase of its own.
  virtual void retire_slot(int buffer) = 0;

  // Whether allgather and broadcast read peers' buffers directly.
  virtual bool single_copy() const = 0;
  // Whether direct reads work between the members at all (alltoall uses them
  // even where single_copy() is off).
  virtual bool direct_reads() const = 0;
  // Blocks of at least this many bytes take the direct reads.
  virtual size_t single_copy_bytes() const = 0;
  // Publishes this member's buffer; the next advance() announces it.
  virtual void publish_address(uintptr_t address) = 0;
  // Copies `bytes` from `member`'s published address + `offset` to `local`.
  virtual void read_member(int member, size_t offset, void* local, size_t bytes) const = 0;

  // Throws the group's error if it is poisoned. Collectives call it first.
  virtual void check_usable() const = 0;
  // Marks the group unusable after `error` escaped a collective, telling the
  // other members why.
  virtual void poison(std::exception_ptr error) = 0;
};

}  // namespace kolo::transport
