// Settings of the shared-memory transport; filled by Config::FromEnv (see
// docs/config.md).
#pragma once

#include <chrono>
#include <cstddef>

namespace kolo::transport::shm {

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
};

}  // namespace kolo::transport::shm
