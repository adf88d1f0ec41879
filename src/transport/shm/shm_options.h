// Settings of the shared-memory transport; filled from the job's settings by
// shm_options_from (shm_settings.h; see docs/config.md).
#pragma once

#include <chrono>
#include <cstddef>

namespace kolo::transport::shm {

enum class SingleCopy { kAuto, kOn, kOff };

struct ShmOptions {
  // Ranks on one host exchange data through a shared segment (KOLO_SHM).
  bool enabled = true;
  // Bytes of each rank's staging buffer; every rank has two, so one round of
  // a collective fills one while peers still read the other
  // (KOLO_SHM_SLOT_BYTES). The segment holds 2 x this per local rank.
  size_t slot_bytes = 1u << 20;
  // A wait polls this long (yielding the core when ranks outnumber cores)
  // before it sleeps on a futex (KOLO_SHM_SPIN_MICROSECONDS).
  std::chrono::microseconds spin{200};
  // Longest wait for a peer before the operation fails naming it; the TCP
  // transport's KOLO_TIMEOUT_SECONDS.
  std::chrono::milliseconds op_timeout{std::chrono::seconds(300)};
  // Large allgathers and broadcasts read peers' buffers directly (one copy,
  // process_vm_readv) when the kernel allows it between the host's ranks
  // (KOLO_SHM_SINGLE_COPY). Set-up probes that and turns it on or off for
  // the group: kAuto also needs no more ranks on the host than cores, kOn
  // only the probe; a group given kAuto directly keeps it off.
  SingleCopy single_copy = SingleCopy::kAuto;
  // Set by set-up: the probe passed on every rank of the host and
  // KOLO_SHM_SINGLE_COPY is not 0. Alltoall then reads blocks of
  // single_copy_bytes and more directly even where single_copy is off for
  // having more ranks than cores.
  bool direct_reads_work = false;
  // From this many bytes per rank's block on (allgather) or of the message
  // (broadcast, up to slot_bytes), those take the direct reads; smaller ones
  // go through the slots, whose one phase is cheaper than the system calls
  // (KOLO_SHM_SINGLE_COPY_BYTES).
  size_t single_copy_bytes = 32 * 1024;
  // The reduce step of a large allreduce works in tiles of this many bytes
  // and copies each reduced tile to the rank's outputs while it is still in
  // the cache (no variable: tests set it small so a round spans tiles).
  size_t tile_bytes = 64 * 1024;
  // Allreduces of at least this many bytes write their outputs with
  // streaming (non-temporal) stores, which skip reading each line first but
  // leave nothing in the cache; smaller outputs are written with ordinary
  // stores and stay cached for whoever reads them next
  // (KOLO_SHM_STREAMING_BYTES; docs/benchmarks.md has the measurements).
  size_t streaming_bytes = size_t{16} << 20;
};

}  // namespace kolo::transport::shm
