#include "tests/softrdma/pin_check.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "tests/softrdma/objects.h"

namespace rrt::tests::softrdma {
namespace {

constexpr uint64_t kPresent = 1ull << 63;
constexpr uint64_t kFrameMask = (1ull << 55) - 1;

uintptr_t pageSize() {
  static const uintptr_t p = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return p;
}

int pagemapFd() {
  static const int fd = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  return fd;
}

// Frames of pages [first, first + n); false on any failure.
bool readFrames(uintptr_t firstPage, size_t n, uint64_t* out) {
  const int fd = pagemapFd();
  if (fd < 0) return false;
  const off_t off = static_cast<off_t>(firstPage / pageSize() * sizeof(uint64_t));
  const ssize_t want = static_cast<ssize_t>(n * sizeof(uint64_t));
  if (pread(fd, out, static_cast<size_t>(want), off) != want) return false;
  for (size_t i = 0; i < n; ++i) {
    if (!(out[i] & kPresent)) return false;
    out[i] &= kFrameMask;
  }
  return true;
}

}  // namespace

bool pinCheckEnabled() {
  static const bool on = [] {
    const char* v = getenv("SOFTRDMA_PIN_CHECK");
    return v && strcmp(v, "1") == 0;
  }();
  return on;
}

std::vector<uint64_t> pinFrames(void* addr, size_t len, bool writable) {
  std::vector<uint64_t> frames;
  if (!pinCheckEnabled() || len == 0) return frames;
  const uintptr_t ps = pageSize();
  const uintptr_t first = reinterpret_cast<uintptr_t>(addr) & ~(ps - 1);
  const uintptr_t last = (reinterpret_cast<uintptr_t>(addr) + len - 1) & ~(ps - 1);
  const size_t n = (last - first) / ps + 1;
  for (uintptr_t p = first; p <= last; p += ps) {
    // Fault each page in as get_user_pages(FOLL_WRITE) would: a private page, not the zero page.
    // Clamp to the range: the bytes outside it may not be ours to touch.
    char* c = reinterpret_cast<char*>(std::max(p, reinterpret_cast<uintptr_t>(addr)));
    if (writable) __atomic_fetch_add(c, 0, __ATOMIC_RELAXED);
    else (void)*static_cast<volatile char*>(c);
  }
  frames.resize(n);
  if (!readFrames(first, n, frames.data())) frames.clear();
  for (uint64_t f : frames)
    if (f == 0) {  // frames hidden (no CAP_SYS_ADMIN): the model cannot work
      frames.clear();
      break;
    }
  return frames;
}

bool framesChanged(const std::vector<uint64_t>& recorded, const void* base, const void* addr,
                   size_t len) {
  if (recorded.empty() || len == 0) return false;
  const uintptr_t ps = pageSize();
  const uintptr_t b = reinterpret_cast<uintptr_t>(base) & ~(ps - 1);
  const uintptr_t first = reinterpret_cast<uintptr_t>(addr) & ~(ps - 1);
  const uintptr_t last = (reinterpret_cast<uintptr_t>(addr) + len - 1) & ~(ps - 1);
  const size_t n = (last - first) / ps + 1;
  const size_t at = (first - b) / ps;
  if (at + n > recorded.size()) return true;
  std::vector<uint64_t> now(n);
  if (!readFrames(first, n, now.data())) return true;  // unmapped or not present: not pinned
  return memcmp(now.data(), recorded.data() + at, n * sizeof(uint64_t)) != 0;
}

bool Mr::pagesChanged(const char* local, uint64_t len) const {
  if (frames.empty()) return false;
  if (!framesChanged(frames, this->local, local, len)) return false;
  fprintf(stderr,
          "softrdma: MR key 0x%x used after the pages under it changed since ibv_reg_mr "
          "(unmapped and remapped?): a NIC would move stale data; failing the access\n",
          ibv.lkey);
  return true;
}

}  // namespace rrt::tests::softrdma
