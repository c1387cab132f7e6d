// Memory that the other processes of this node can map: what rrt_alloc_mem hands out.
//
// Why: a collective on one node moves every byte of a private (malloc) buffer twice, once into
// shared memory and once out, or through the kernel (CMA pins every page). A buffer that peers
// can map is read where it lies, so a large allreduce moves what a ring over shared buffers
// moves (bench/ring_bound.c) and no more. NCCL's ncclMemAlloc and MPI_Alloc_mem are the same
// idea: the user asks the library for memory it can do more with.
//
// How: every allocation is its own memfd (anonymous, no name to leak), mapped shared. The fd
// stays open in this process; a peer on the node opens /proc/<pid>/fd/<fd> (allowed where CMA
// is: same user, ptrace access) and maps the same pages (peer_map.h). The memfd's inode number
// names the memory: unique among live files, and a peer's mapping keeps the file alive, so a
// cached peer mapping can never be confused with a later allocation. free() truncates the file
// to 0 before closing it, so a peer's stale cached mapping holds no memory.
//
// Allocations below 64 KiB are private, page-aligned anonymous memory (sharing gains nothing
// there, and a descriptor each would add up). When memfd_create fails (no memfd, out of fds),
// alloc gives private memory too: allocations always work, only sharing is lost (find() says
// not shared).
//
// Thread safety: a mutex guards the table (alloc, free and find may run from any thread). find()
// is called once per buffer by the collectives that can use it: a short locked scan, no lock
// at all while the process has no shared allocation.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/status.h"

namespace rrt::memory {

// What a peer needs to map a buffer of this process: the memfd (by fd and inode), its mapped
// length, and the buffer's offset into it. ino 0: not shared memory.
struct SharedRef {
  uint64_t ino = 0;
  uint64_t mapBytes = 0;
  uint64_t offset = 0;
  int32_t fd = -1;
  int32_t pad = 0;
};

// bytes of memory (64-byte aligned; page-aligned in fact), *out its address; bytes 0 gives
// nullptr and Ok. ErrNoMemory when even private memory cannot be had.
Status sharedAlloc(size_t bytes, void** out);
// Memory from sharedAlloc (nullptr: nothing to do). ErrArg when p is not the start of one.
Status sharedFree(void* p);
// The shared allocation that holds [p, p + bytes) wholly: true with *ref set, else false.
bool sharedFind(const void* p, size_t bytes, SharedRef* ref);

}  // namespace rrt::memory
