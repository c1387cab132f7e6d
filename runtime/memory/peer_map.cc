// Peers' shared memory, mapped and cached (peer_map.h).
#include "runtime/memory/peer_map.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

#include "runtime/core/log.h"

namespace rrt::memory {
namespace {

constexpr size_t kMaxEntries = 64;

struct Entry {
  uint64_t ino;
  char* base;
  size_t mapBytes;
  uint64_t stamp;  // of the last call that used it
};

std::mutex gMutex;
std::vector<Entry>& cache() {
  static std::vector<Entry>* c = new std::vector<Entry>();  // outlives static dtors
  return *c;
}

// pid's fd, opened through /proc when it is still the file of inode ino: the fd, or -1.
int openPeerFd(pid_t pid, int32_t fd, uint64_t ino, size_t minBytes) {
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", static_cast<int>(pid), static_cast<int>(fd));
  const int f = open(path, O_RDWR | O_CLOEXEC);
  if (f < 0) {
    RRT_DEBUG("peer memory: open %s: %s", path, strerror(errno));
    return -1;
  }
  struct stat st;
  if (fstat(f, &st) != 0 || static_cast<uint64_t>(st.st_ino) != ino ||
      static_cast<size_t>(st.st_size) < minBytes) {
    RRT_DEBUG("peer memory: %s is not the memory named (inode %llu)", path,
              static_cast<unsigned long long>(ino));
    close(f);
    return -1;
  }
  return f;
}

// Drops the least recently used entry that the current call does not use, if any.
void evictOne(std::vector<Entry>& c, uint64_t stamp) {
  size_t victim = c.size();
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i].stamp != stamp && (victim == c.size() || c[i].stamp < c[victim].stamp)) victim = i;
  if (victim == c.size()) return;
  munmap(c[victim].base, c[victim].mapBytes);
  c[victim] = c.back();
  c.pop_back();
}

}  // namespace

char* peerMap(pid_t pid, const SharedRef& ref, uint64_t stamp) {
  std::lock_guard<std::mutex> lock(gMutex);
  std::vector<Entry>& c = cache();
  for (Entry& e : c)
    if (e.ino == ref.ino) {
      e.stamp = stamp;
      return e.base + ref.offset;
    }
  const int f = openPeerFd(pid, ref.fd, ref.ino, ref.mapBytes);
  if (f < 0) return nullptr;
  void* p = mmap(nullptr, ref.mapBytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, f, 0);
  const int e = errno;
  close(f);
  if (p == MAP_FAILED) {
    RRT_DEBUG("peer memory: mmap of %llu bytes of process %d: %s",
              static_cast<unsigned long long>(ref.mapBytes), static_cast<int>(pid), strerror(e));
    return nullptr;
  }
  RRT_DEBUG("peer memory: mapped %llu bytes of process %d (inode %llu)",
            static_cast<unsigned long long>(ref.mapBytes), static_cast<int>(pid),
            static_cast<unsigned long long>(ref.ino));
  if (c.size() >= kMaxEntries) evictOne(c, stamp);
  c.push_back(Entry{ref.ino, static_cast<char*>(p), ref.mapBytes, stamp});
  return static_cast<char*>(p) + ref.offset;
}

bool peerMappable(pid_t pid, int32_t fd, uint64_t ino) {
  if (fd < 0) return false;
  const int f = openPeerFd(pid, fd, ino, 0);
  if (f < 0) return false;
  close(f);
  return true;
}

int32_t probeFd(uint64_t* ino) {
  static int32_t fd = -2;
  static uint64_t inode = 0;
  static std::mutex m;
  std::lock_guard<std::mutex> lock(m);
  if (fd == -2) {
    fd = memfd_create("rrt-probe", MFD_CLOEXEC);
    struct stat st;
    if (fd >= 0 && fstat(fd, &st) == 0) {
      inode = static_cast<uint64_t>(st.st_ino);
    } else if (fd >= 0) {
      close(fd);
      fd = -1;
    }
  }
  *ino = inode;
  return fd;
}

}  // namespace rrt::memory
