#include "tests/unit/gpu_fake_driver.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>

#include "runtime/coll/op.h"

namespace rrt::gpu::test {

namespace {
size_t pageRound(size_t n) {
  const size_t pg = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (n + pg - 1) / pg * pg;
}
}  // namespace

FakeDriver::~FakeDriver() {
  for (auto& [base, a] : dev_) {
    munmap(reinterpret_cast<void*>(base), a.mapped);
    close(a.fd);
  }
  for (auto& [local, m] : mappings_) {
    if (m.zombie) free(reinterpret_cast<void*>(m.target));
    munmap(reinterpret_cast<void*>(local), m.mapped);
  }
}

// Whole 2 MiB-aligned chunks, like the driver's device address ranges: no host mapping ever
// shares a chunk with device memory (the memory-type cache relies on it).
constexpr size_t kChunk = size_t{2} << 20;

// A memfd of the allocation's size mapped PROT_NONE at `at` (exactly), or anywhere 2 MiB-aligned.
void* FakeDriver::mapAlloc(void* at, size_t bytes) {
  const size_t mapped = (pageRound(bytes ? bytes : 1) + kChunk - 1) / kChunk * kChunk;
  const int fd = memfd_create("rrt-fake-device", MFD_CLOEXEC);
  if (fd < 0) return nullptr;
  if (ftruncate(fd, static_cast<off_t>(mapped)) != 0) {
    close(fd);
    return nullptr;
  }
  uintptr_t base;
  int where = MAP_FIXED_NOREPLACE;
  if (at) {
    base = reinterpret_cast<uintptr_t>(at);
  } else {
    void* raw = mmap(nullptr, mapped + kChunk, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (raw == MAP_FAILED) {
      close(fd);
      return nullptr;
    }
    const uintptr_t r = reinterpret_cast<uintptr_t>(raw);
    base = (r + kChunk - 1) / kChunk * kChunk;
    if (base > r) munmap(raw, base - r);
    if (r + kChunk > base) munmap(reinterpret_cast<void*>(base + mapped), r + kChunk - base);
    where = MAP_FIXED;  // over our own reservation: no other mapping can slip in between
  }
  void* p = mmap(reinterpret_cast<void*>(base), mapped, PROT_NONE, MAP_SHARED | where, fd, 0);
  if (p == MAP_FAILED || p != reinterpret_cast<void*>(base)) {
    if (p != MAP_FAILED) munmap(p, mapped);
    close(fd);
    return nullptr;
  }
  dev_[base] = Alloc{bytes ? bytes : 1, mapped, nextId_++, fd};
  return p;
}

void* FakeDriver::devAlloc(size_t bytes) { return mapAlloc(nullptr, bytes); }

void* FakeDriver::devAllocAt(void* at, size_t bytes) { return at ? mapAlloc(at, bytes) : nullptr; }

void FakeDriver::devFree(void* p) {
  auto it = dev_.find(reinterpret_cast<uintptr_t>(p));
  if (it == dev_.end()) return;
  // As with CUDA, an importer's open mapping keeps the old memory alive: it keeps the old
  // bytes (a private copy), whatever is allocated at this address later.
  for (auto& [local, m] : mappings_) {
    if (m.zombie || m.target != it->first || m.id != it->second.id) continue;
    void* keep = malloc(m.bytes);
    devRead(keep, p, m.bytes);
    m.target = reinterpret_cast<uintptr_t>(keep);
    m.zombie = true;
  }
  munmap(p, it->second.mapped);
  close(it->second.fd);  // a dma-buf registered from it keeps the pages (its own fd reference)
  dev_.erase(it);
}

Status FakeDriver::dmabuf(const void* addr, size_t len, int* fd, uint64_t* offset) {
  uintptr_t base;
  const Alloc* a = find(reinterpret_cast<uintptr_t>(addr), &base);
  if (!dmabufExport) return Status::ErrUnsupported;
  if (!a || reinterpret_cast<uintptr_t>(addr) - base + len > pageRound(a->bytes)) return Status::ErrArg;
  const int d = dup(a->fd);
  if (d < 0) return Status::ErrTransport;
  ++dmabufExports;
  *fd = d;
  *offset = reinterpret_cast<uintptr_t>(addr) - base;
  return Status::Ok;
}

uintptr_t FakeDriver::translate(uintptr_t a, size_t n, bool* ok) const {
  auto it = mappings_.upper_bound(a);
  if (it == mappings_.begin()) return a;
  --it;
  if (a - it->first >= it->second.mapped) return a;
  if (a - it->first + n > it->second.bytes) *ok = false;  // past the peer's allocation
  return it->second.target + (a - it->first);
}

const FakeDriver::Alloc* FakeDriver::find(uintptr_t a, uintptr_t* base) const {
  auto it = dev_.upper_bound(a);
  if (it == dev_.begin()) return nullptr;
  --it;
  if (a - it->first >= it->second.bytes) return nullptr;
  *base = it->first;
  return &it->second;
}

void FakeDriver::protect(uintptr_t a, size_t n, bool open) {
  uintptr_t base;
  const Alloc* al = find(a, &base);
  if (!al) return;
  mprotect(reinterpret_cast<void*>(base), al->mapped, open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

void FakeDriver::devWrite(void* dst, const void* src, size_t n) {
  if (n == 0) return;  // an empty vector's data() may be null: no memcpy(.., nullptr, 0)
  protect(reinterpret_cast<uintptr_t>(dst), n, true);
  memcpy(dst, src, n);
  protect(reinterpret_cast<uintptr_t>(dst), n, false);
}

void FakeDriver::devRead(void* dst, const void* src, size_t n) {
  if (n == 0) return;  // an empty vector's data() may be null: no memcpy(.., nullptr, 0)
  protect(reinterpret_cast<uintptr_t>(src), n, true);
  memcpy(dst, src, n);
  protect(reinterpret_cast<uintptr_t>(src), n, false);
}

void FakeDriver::run(const CopyLog& c) {
  if (c.n == 0) return;
  protect(c.src, c.n, true);
  protect(c.dst, c.n, true);
  memmove(reinterpret_cast<void*>(c.dst), reinterpret_cast<const void*>(c.src), c.n);
  protect(c.src, c.n, false);
  protect(c.dst, c.n, false);
}

Status FakeDriver::reduce(int op, int type, const void* in, void* inout, size_t n, Stream) {
  if (!reduceOnDevice) return Status::ErrUnsupported;
  coll::Kernel k = coll::kernelFor(op, type);
  if (!k) return Status::ErrUnsupported;
  if (n == 0) return Status::Ok;  // a probe: the kernel exists
  if (failCopies) return Status::ErrArg;
  if (failReduces) return Status::ErrTransport;  // e.g. the kernel launch fails
  ++reduces;
  // Queued like a copy (n = 0 in the log: run() skips it), executed in stream order.
  log.push_back(CopyLog{reinterpret_cast<uintptr_t>(inout), reinterpret_cast<uintptr_t>(in), 0, false});
  reduceOps_[log.size() - 1] = Reduce{op, type, reinterpret_cast<uintptr_t>(in),
                                      reinterpret_cast<uintptr_t>(inout), n};
  queue_.push_back(log.size() - 1);
  ++issued_;
  if (!manual) completeAll();
  return Status::Ok;
}

size_t FakeDriver::completeNext() {
  if (queue_.empty()) return 0;
  const size_t idx = queue_.front();
  CopyLog& c = log[idx];
  queue_.pop_front();
  auto red = reduceOps_.find(idx);
  if (red != reduceOps_.end()) {
    // The element size: from the host kernel's view, n base elements; open both ranges.
    const Reduce& r = red->second;
    size_t esz = 0;
    rrt_type_size(r.type, &esz);
    const size_t bytes = r.n * esz;
    protect(r.in, bytes, true);
    protect(r.inout, bytes, true);
    coll::kernelFor(r.op, r.type)(reinterpret_cast<const void*>(r.in),
                                  reinterpret_cast<void*>(r.inout), r.n);
    protect(r.in, bytes, false);
    protect(r.inout, bytes, false);
    reduceOps_.erase(red);
  } else {
    run(c);
  }
  c.done = true;
  ++completed_;
  return queue_.size();
}

void FakeDriver::completeAll() {
  while (completeNext() > 0) {
  }
}

Status FakeDriver::pointerInfo(const void* p, PointerInfo* info) {
  ++pointerQueries;
  *info = PointerInfo{};
  uintptr_t base;
  const Alloc* a = find(reinterpret_cast<uintptr_t>(p), &base);
  if (!a) return Status::Ok;
  info->type = memory::MemType::Cuda;
  info->base = base;
  info->size = a->bytes;
  info->bufferId = a->id;
  info->device = 0;
  return Status::Ok;
}

Status FakeDriver::streamCreate(Stream* out) {
  ++streams;
  *out = reinterpret_cast<Stream>(uintptr_t{0x5157});
  return Status::Ok;
}

Status FakeDriver::streamSynchronize(Stream) {
  ++syncs;
  completeAll();
  return Status::Ok;
}

Status FakeDriver::eventCreate(Event* out) {
  *out = new Event_;
  return Status::Ok;
}

void FakeDriver::eventDestroy(Event e) { delete static_cast<Event_*>(e); }

Status FakeDriver::eventRecord(Event e, Stream) {
  static_cast<Event_*>(e)->waitFor = issued_;
  return Status::Ok;
}

Status FakeDriver::eventQuery(Event e) {
  return completed_ >= static_cast<Event_*>(e)->waitFor ? Status::Ok : Status::InProgress;
}

Status FakeDriver::memcpyAsync(void* dst, const void* src, size_t len, Stream) {
  if (failCopies) return Status::ErrArg;
  if (failCopyAfter == 0) {
    failCopyAfter = -1;
    return Status::ErrTransport;
  }
  if (failCopyAfter > 0) --failCopyAfter;
  bool ok = true;
  const uintptr_t d = translate(reinterpret_cast<uintptr_t>(dst), len, &ok);
  const uintptr_t s = translate(reinterpret_cast<uintptr_t>(src), len, &ok);
  if (!ok) return Status::ErrArg;
  log.push_back(CopyLog{d, s, len, false});
  queue_.push_back(log.size() - 1);
  ++issued_;
  if (!manual) completeAll();
  return Status::Ok;
}

Status FakeDriver::hostAlloc(size_t len, void** out) {
  ++hostAllocs;
  *out = aligned_alloc(4096, pageRound(len ? len : 1));
  return *out ? Status::Ok : Status::ErrNoMemory;
}

void FakeDriver::hostFree(void* p) {
  ++hostFrees;
  free(p);
}

Status FakeDriver::ipcGetHandle(const void* base, IpcHandle* out) {
  ++ipcGets;
  uintptr_t b;
  const Alloc* a = find(reinterpret_cast<uintptr_t>(base), &b);
  if (!a || b != reinterpret_cast<uintptr_t>(base)) return Status::ErrArg;
  memset(out->bytes, 0, sizeof out->bytes);
  memcpy(out->bytes, &b, sizeof b);
  memcpy(out->bytes + 8, &a->id, sizeof a->id);
  return Status::Ok;
}

Status FakeDriver::ipcOpen(const IpcHandle& h, void** base) {
  uintptr_t b;
  uint64_t id;
  memcpy(&b, h.bytes, sizeof b);
  memcpy(&id, h.bytes + 8, sizeof id);
  uintptr_t found;
  if (failIpcOpen) return Status::ErrTransport;
  const Alloc* a = find(b, &found);
  if (!a || a->id != id || found != b) return Status::ErrArg;  // the exporter freed it
  ++ipcOpens;
  // A distinct local address range per open, as a real mapping has; copies translate it.
  void* local = mmap(nullptr, a->mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (local == MAP_FAILED) return Status::ErrNoMemory;
  mappings_[reinterpret_cast<uintptr_t>(local)] = Mapping{b, a->bytes, a->mapped, id, false};
  *base = local;
  return Status::Ok;
}

Status FakeDriver::ipcClose(void* base) {
  auto it = mappings_.find(reinterpret_cast<uintptr_t>(base));
  if (it == mappings_.end()) return Status::ErrArg;
  ++ipcCloses;
  if (it->second.zombie) free(reinterpret_cast<void*>(it->second.target));
  munmap(base, it->second.mapped);
  mappings_.erase(it);
  return Status::Ok;
}

}  // namespace rrt::gpu::test
