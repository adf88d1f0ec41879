#include "transport/shm/process_memory.h"

#include <sys/uio.h>

#include <cerrno>
#include <cstring>

namespace kolo::transport::shm {

int read_process_memory(pid_t pid, uint64_t remote, void* local, size_t bytes) {
  auto* to = static_cast<std::byte*>(local);
  while (bytes > 0) {
    iovec mine{to, bytes};
    iovec theirs{reinterpret_cast<void*>(static_cast<uintptr_t>(remote)), bytes};
    const ssize_t got = ::process_vm_readv(pid, &mine, 1, &theirs, 1, 0);
    if (got < 0) {
      if (errno == EINTR) continue;
      return errno;
    }
    if (got == 0) return EFAULT;  // a partial read stops at an unmapped page
    to += got;
    remote += static_cast<uint64_t>(got);
    bytes -= static_cast<size_t>(got);
  }
  return 0;
}

bool can_read_process_memory(pid_t pid, uint64_t remote, uint64_t expected) {
  uint64_t seen = 0;
  return read_process_memory(pid, remote, &seen, sizeof seen) == 0 && seen == expected;
}

}  // namespace kolo::transport::shm
