// Memory-release hooks: tell the registration caches when the application gives memory back.
//
// A cached registration is only correct while the pages behind its virtual range stay the same.
// They change when the range is unmapped (munmap, mremap moving or shrinking it), when its pages
// are dropped (madvise DONTNEED / FREE / REMOVE: the next touch gets fresh zero pages), or when
// the heap shrinks (brk). Open MPI's memory patcher and UCX's UCM rewrite the entry of these libc
// functions in memory so that even libc's own internal calls are seen. rrt takes a smaller,
// safe scheme instead:
//   1. librrt defines munmap, mremap and madvise itself. The dynamic linker binds every call
//      made through the PLT (the application's, other libraries') to these, which invalidate the
//      overlapping cache entries and then call libc's (dlsym RTLD_NEXT; the raw system call if
//      that is unavailable).
//   2. The calls these cannot see are libc's internal ones, and inside libc only malloc gives
//      memory back (free of an mmap'ed chunk, heap trimming with brk or madvise). So while a
//      cache is live, malloc is told never to do so: mallopt(M_MMAP_MAX, 0) and
//      mallopt(M_TRIM_THRESHOLD, -1). A freed heap range then stays mapped with the same pages,
//      and a registration of it stays correct when malloc hands the address out again.
// The cost is that the process's heap does not shrink while verbs is in use (Open MPI's
// leave_pinned mode makes the same trade). Not covered: raw syscall(SYS_munmap) and statically
// linked code that bypasses the PLT; RRT_IB_REG_CACHE=off is the escape hatch.
//
// Listeners are registered by RegCache (reg_cache.h); the hooks cost one relaxed load when none
// is registered. Thread-safe; the hooks never allocate.
#pragma once

#include <cstddef>
#include <cstdint>

namespace rrt::memory {

class RegCache;

// Adds / removes a cache that invalidate() must reach. At most kMaxReleaseListeners at once;
// addReleaseListener also switches malloc to never give memory back (see above).
constexpr int kMaxReleaseListeners = 8;
void addReleaseListener(RegCache* cache);
void removeReleaseListener(RegCache* cache);

// Called by the hooks (and by tests): [addr, addr+len) no longer has the pages it had.
void releaseRange(const void* addr, size_t len);

// How many ranges the hooks reported since start (tests check the hooks are bound).
uint64_t releaseEvents();

}  // namespace rrt::memory
