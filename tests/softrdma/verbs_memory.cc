// Exported verbs: protection domains and memory regions.
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>

#include <cerrno>
#include <mutex>

#include "tests/softrdma/device_caps.h"
#include "tests/softrdma/engine.h"
#include "tests/softrdma/objects.h"
#include "tests/softrdma/pin_check.h"
#include "tests/softrdma/registry.h"

#undef ibv_reg_mr
#undef ibv_reg_mr_iova

using namespace rrt::tests::softrdma;

namespace {

constexpr int kKnownAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                             IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC |
                             IBV_ACCESS_ZERO_BASED | IBV_ACCESS_ON_DEMAND;

// Hardware pins the pages at registration and fails with EFAULT if they are not mapped; probe
// the first and last byte the same way the emulated NIC will later reach them.
bool mapped(void* addr, size_t length) {
  if (length == 0) return true;
  char probe;
  char* ends[2] = {static_cast<char*>(addr), static_cast<char*>(addr) + length - 1};
  for (char* p : ends) {
    iovec local{&probe, 1}, remote{p, 1};
    if (process_vm_readv(getpid(), &local, 1, &remote, 1, 0) != 1) return false;
  }
  return true;
}

ibv_mr* registerMr(ibv_pd* ibvPd, void* addr, size_t length, uint64_t iova, unsigned access) {
  access &= ~IBV_ACCESS_OPTIONAL_RANGE;  // optional flags: ignored when unsupported, as documented
  bool needsLocalWrite = access & (IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_ATOMIC);
  if ((access & ~kKnownAccess) || (needsLocalWrite && !(access & IBV_ACCESS_LOCAL_WRITE)) ||
      length > kMaxMrSize) {
    errno = EINVAL;
    return nullptr;
  }
  if (!mapped(addr, length)) {
    errno = EFAULT;
    return nullptr;
  }
  auto* mr = new Mr();
  mr->frames = pinFrames(addr, length, (access & IBV_ACCESS_LOCAL_WRITE) != 0);
  mr->pd = reinterpret_cast<Pd*>(ibvPd);
  mr->access = static_cast<int>(access);
  mr->iova = (access & IBV_ACCESS_ZERO_BASED) ? 0 : iova;
  mr->ibv.context = ibvPd->context;
  mr->ibv.pd = ibvPd;
  mr->ibv.addr = addr;
  mr->local = static_cast<char*>(addr);
  mr->ibv.length = length;
  uint32_t key = Registry::instance().allocKey();
  mr->ibv.lkey = mr->ibv.rkey = mr->ibv.handle = key;
  Engine& engine = Engine::get();
  std::lock_guard<std::mutex> guard(engine.lock_);
  engine.mrs_[key] = mr;
  ++mr->pd->users;
  return &mr->ibv;
}

}  // namespace

extern "C" {

ibv_pd* ibv_alloc_pd(ibv_context* context) {
  static uint32_t handles = 0;
  auto* pd = new Pd();
  pd->ibv.context = context;
  pd->ibv.handle = __atomic_add_fetch(&handles, 1, __ATOMIC_RELAXED);
  return &pd->ibv;
}

int ibv_dealloc_pd(ibv_pd* ibvPd) {
  auto* pd = reinterpret_cast<Pd*>(ibvPd);
  {
    std::lock_guard<std::mutex> guard(Engine::get().lock_);
    if (pd->users > 0) return EBUSY;
  }
  delete pd;
  return 0;
}

ibv_mr* ibv_reg_mr(ibv_pd* pd, void* addr, size_t length, int access) {
  return registerMr(pd, addr, length, reinterpret_cast<uintptr_t>(addr),
                    static_cast<unsigned>(access));
}

ibv_mr* ibv_reg_mr_iova(ibv_pd* pd, void* addr, size_t length, uint64_t iova, int access) {
  return registerMr(pd, addr, length, iova, static_cast<unsigned>(access));
}

ibv_mr* ibv_reg_mr_iova2(ibv_pd* pd, void* addr, size_t length, uint64_t iova, unsigned access) {
  return registerMr(pd, addr, length, iova, access);
}

// The device maps the dma-buf (here: any mmap-able fd, e.g. the memfd behind the fake CUDA
// driver's device memory) and moves data through that mapping; remote and local addresses are
// iova-based, as for hardware. ibv_mr.addr is the offset, as rdma-core sets it.
ibv_mr* ibv_reg_dmabuf_mr(ibv_pd* pd, uint64_t offset, size_t length, uint64_t iova, int fd,
                          int access) {
  struct stat st;
  if (length == 0 || fstat(fd, &st) != 0 || offset > static_cast<uint64_t>(st.st_size) ||
      length > static_cast<uint64_t>(st.st_size) - offset) {
    errno = EINVAL;
    return nullptr;
  }
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t mapOff = offset & ~(page - 1);
  const size_t mapLen = static_cast<size_t>(offset - mapOff + length);
  void* map = mmap(nullptr, mapLen, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
                   static_cast<off_t>(mapOff));
  if (map == MAP_FAILED) return nullptr;  // errno from mmap (ENODEV: not mappable)
  ibv_mr* ibvMr = registerMr(pd, static_cast<char*>(map) + (offset - mapOff), length, iova,
                             static_cast<unsigned>(access));
  if (!ibvMr) {
    const int e = errno;
    munmap(map, mapLen);
    errno = e;
    return nullptr;
  }
  auto* mr = reinterpret_cast<Mr*>(ibvMr);
  mr->dmabufMap = map;
  mr->dmabufMapLen = mapLen;
  ibvMr->addr = reinterpret_cast<void*>(static_cast<uintptr_t>(offset));
  return ibvMr;
}

int ibv_dereg_mr(ibv_mr* ibvMr) {
  auto* mr = reinterpret_cast<Mr*>(ibvMr);
  Engine& engine = Engine::get();
  {
    std::lock_guard<std::mutex> guard(engine.lock_);
    engine.mrs_.erase(ibvMr->lkey);
    --mr->pd->users;
  }
  if (mr->dmabufMap) munmap(mr->dmabufMap, mr->dmabufMapLen);
  delete mr;
  return 0;
}

}  // extern "C"
