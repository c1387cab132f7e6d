// Memory that peers on the node can map (shared_alloc.h): one memfd per allocation.
#include "runtime/memory/shared_alloc.h"

#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <mutex>
#include <vector>

#include "runtime/core/log.h"

namespace rrt::memory {
namespace {

struct Allocation {
  char* base;
  size_t mapBytes;
  int fd;  // -1: private memory (small, or memfd_create failed)
  uint64_t ino;
};

// Below this an allocation is private: the collectives that read peers' buffers where they lie
// gain nothing on so few bytes, and a program that makes many small ones (MPI_Alloc_mem in
// the MPICH tests) would hold a descriptor for each.
constexpr size_t kSharedMinBytes = 64 * 1024;

std::mutex gMutex;
std::atomic<size_t> gShared{0};  // shared allocations in the table: find() skips the lock at 0
std::vector<Allocation>& table() {
  static std::vector<Allocation>* t = new std::vector<Allocation>();  // outlives static dtors
  return *t;
}

size_t pageRound(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// A memfd of bytes, mapped shared: the allocation, or fd -1 and base nullptr with errno's why.
Allocation mapMemfd(size_t bytes) {
  Allocation a{nullptr, bytes, -1, 0};
  const int fd = memfd_create("rrt-mem", MFD_CLOEXEC);
  if (fd < 0) return a;
  struct stat st;
  void* p = MAP_FAILED;
  if (ftruncate(fd, static_cast<off_t>(bytes)) == 0 && fstat(fd, &st) == 0)
    p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) {
    const int e = errno;
    close(fd);
    errno = e;
    return a;
  }
  a.base = static_cast<char*>(p);
  a.fd = fd;
  a.ino = static_cast<uint64_t>(st.st_ino);
  return a;
}

}  // namespace

Status sharedAlloc(size_t bytes, void** out) {
  *out = nullptr;
  if (bytes == 0) return Status::Ok;
  const size_t mapBytes = pageRound(bytes);
  if (mapBytes < bytes) return Status::ErrNoMemory;  // wrapped
  Allocation a{nullptr, mapBytes, -1, 0};
  if (mapBytes >= kSharedMinBytes) a = mapMemfd(mapBytes);
  if (!a.base) {
    static bool warned = false;
    if (mapBytes >= kSharedMinBytes && !warned) {
      warned = true;
      RRT_WARN("rrt_alloc_mem: no shareable memory (%s): private memory instead, which the "
               "node's collectives copy as they copy malloc'd buffers",
               strerror(errno));
    }
    void* p = mmap(nullptr, mapBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) return Status::ErrNoMemory;
    a.base = static_cast<char*>(p);
  }
  std::lock_guard<std::mutex> lock(gMutex);
  table().push_back(a);
  if (a.fd >= 0) gShared.fetch_add(1, std::memory_order_relaxed);
  *out = a.base;
  return Status::Ok;
}

Status sharedFree(void* p) {
  if (!p) return Status::Ok;
  Allocation a{};
  {
    std::lock_guard<std::mutex> lock(gMutex);
    std::vector<Allocation>& t = table();
    size_t i = 0;
    while (i < t.size() && t[i].base != p) ++i;
    if (i == t.size()) return Status::ErrArg;
    a = t[i];
    t[i] = t.back();
    t.pop_back();
    if (a.fd >= 0) gShared.fetch_sub(1, std::memory_order_relaxed);
  }
  munmap(a.base, a.mapBytes);
  if (a.fd >= 0) {
    // Peers may keep a mapping cached (peer_map.h): with the file emptied it holds no memory.
    if (ftruncate(a.fd, 0) != 0) RRT_DEBUG("rrt_free_mem: ftruncate: %s", strerror(errno));
    close(a.fd);
  }
  return Status::Ok;
}

bool sharedFind(const void* p, size_t bytes, SharedRef* ref) {
  if (gShared.load(std::memory_order_relaxed) == 0) return false;  // the common case: no lock
  const char* c = static_cast<const char*>(p);
  std::lock_guard<std::mutex> lock(gMutex);
  for (const Allocation& a : table()) {
    if (c < a.base || c >= a.base + a.mapBytes) continue;
    const size_t off = static_cast<size_t>(c - a.base);
    if (a.fd < 0 || bytes > a.mapBytes - off) return false;
    ref->ino = a.ino;
    ref->mapBytes = a.mapBytes;
    ref->offset = off;
    ref->fd = a.fd;
    return true;
  }
  return false;
}

}  // namespace rrt::memory
