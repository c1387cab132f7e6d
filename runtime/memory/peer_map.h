// Peers' shared memory (shared_alloc.h) mapped into this process, cached.
//
// A peer's buffer from rrt_alloc_mem is named by its process and a SharedRef (memfd fd and
// inode, mapped length, offset). The first use maps the whole memfd, through
// /proc/<pid>/fd/<fd> (checked to be the same inode, so a closed and reused fd is never
// mapped), pre-faulted; later uses find the mapping by inode with no system call. The inode is
// exact: the cached mapping keeps the peer's file alive, so its number is never reused while
// cached. When the peer frees the memory (it empties the file) the stale mapping holds no
// memory and is evicted in time (least recently used first, beyond kMaxEntries, never one used
// by the current call: its stamp).
//
// Thread safety: a mutex guards the cache.
#pragma once

#include <sys/types.h>

#include <cstdint>

#include "runtime/memory/shared_alloc.h"

namespace rrt::memory {

// The address, in this process, of byte ref.offset of pid's shared allocation ref, or nullptr
// (with a debug line saying why) when it cannot be mapped. stamp: the caller's call, whose
// mappings stay until its next stamp.
char* peerMap(pid_t pid, const SharedRef& ref, uint64_t stamp);

// Whether this process may map pid's shared memory (what peerMap needs: same user, ptrace read
// access): opens pid's probe fd (probeFd() of that process), checks its inode.
bool peerMappable(pid_t pid, int32_t fd, uint64_t ino);
// This process's probe: a one-page memfd kept open for the process's life (fd, inode). fd -1
// when memfd is not available here.
int32_t probeFd(uint64_t* ino);

}  // namespace rrt::memory
