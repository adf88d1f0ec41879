// Reading another process's memory directly (Linux cross-memory attach,
// process_vm_readv): one copy from a peer's buffer into ours instead of two
// through a shared slot. The kernel allows it between processes of the same
// user unless a security policy forbids it (Yama ptrace_scope, a container's
// seccomp profile), so callers probe it first and fall back to the slots.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

namespace kolo::transport::shm {

// Copies `bytes` from address `remote` of process `pid` into `local`.
// Returns 0, or the errno of the first failed call (ESRCH: gone, EPERM:
// forbidden, EFAULT: the range is not mapped there).
int read_process_memory(pid_t pid, uint64_t remote, void* local, size_t bytes);

// True when this process may read `pid`'s memory and finds `expected` in the
// 8 bytes at `remote`: the peer is the process it claims to be (not a
// namesake in another pid namespace) and the policy allows the reads.
bool can_read_process_memory(pid_t pid, uint64_t remote, uint64_t expected);

}  // namespace kolo::transport::shm
