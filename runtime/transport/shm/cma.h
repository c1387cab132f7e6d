// Cross-memory attach: single-copy transfers between processes of one node through
// process_vm_readv / process_vm_writev.
//
// The kernel allows them when the caller may ptrace the peer (same user, and under Yama
// ptrace_scope 1 the peer must have named us, or anyone, as its ptracer: allowPeersToRead()).
// Both calls loop over partial transfers (the kernel moves at most ~2 GiB per call and may stop
// early) and retry EINTR.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <cstdint>

#include "runtime/core/status.h"

namespace rrt::transport::shm {

// Result of a transfer: Ok, ErrUnsupported (CMA refused: EPERM, ENOSYS), ErrProcFailed (ESRCH:
// the peer is gone), ErrBuffer (EFAULT: bad local or remote range), ErrNoMemory, ErrTransport.
Status cmaRead(pid_t pid, void* local, uint64_t remote, size_t len);
Status cmaWrite(pid_t pid, const void* local, uint64_t remote, size_t len);

// Lets any process of this user read us by CMA under Yama ptrace_scope 1 (prctl
// PR_SET_PTRACER_ANY); a no-op without Yama.
void allowPeersToRead();

// Whether CMA can work at all here: the system call exists and is not filtered (a read of our
// own memory succeeds), and Yama does not forbid attaching to siblings (ptrace_scope >= 2).
bool cmaAvailable();

}  // namespace rrt::transport::shm
