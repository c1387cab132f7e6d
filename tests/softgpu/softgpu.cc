// The software GPU: a user-space stand-in for the CUDA driver (libcuda.so.1, the entry points rrt
// and its test programs use), so that rrt's device-buffer paths run across processes on machines
// without a GPU: CUDA IPC between ranks of one node, the pipelined staging, GPUDirect RDMA over
// the software RDMA device (tests/softrdma), collectives on device buffers. Never installed.
//
// The model (one device per process, "device 0"):
//   - Device memory is a memfd per allocation, mapped PROT_NONE in whole 2 MiB-aligned chunks (no
//     host mapping ever shares a chunk with it, as with the real driver's reserved ranges). The
//     CPU cannot touch it: a program that dereferences a device pointer, or reads it with CMA
//     (process_vm_readv), fails as it would on a GPU. The driver's own copies open the
//     protection around themselves.
//   - Streams and events exist but every operation completes in the call (copies, memset).
//   - Every allocation has a unique buffer id (CU_POINTER_ATTRIBUTE_BUFFER_ID).
//   - CUDA IPC: the handle names the exporter's pid, the memfd's descriptor and inode; the
//     importer opens /proc/<pid>/fd/<fd> (same user) and maps it, so the importer's mapping keeps
//     the memory alive after the exporter frees it, as CUDA does. A handle of freed memory (the
//     descriptor gone or another file) fails with CUDA_ERROR_INVALID_HANDLE.
//   - GPUDirect RDMA: cuMemGetHandleForAddressRange(DMA_BUF_FD) hands out a duplicate of the
//     memfd (the software RDMA device's ibv_reg_dmabuf_mr maps it), for ranges starting at an
//     allocation's base (SOFTGPU_DMABUF=0: not supported, as on drivers without dma-buf).
//   - No kernels: cuModuleLoadData fails (CUDA_ERROR_NO_BINARY_FOR_GPU), so rrt reduces device
//     buffers on the host, as on a device its kernels were not built for.
// Anything else rrt would need aborts loudly: it is not exported, and rrt's loader refuses a
// driver that lacks an entry point it resolves.
#include <cuda.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

namespace {

constexpr size_t kChunk = size_t{2} << 20;
constexpr char kMagic[8] = "SOFTGPU";

struct Mapping {
  size_t bytes;   // what the program asked for
  size_t mapped;  // whole chunks
  int fd;         // the memfd (ours, or the importer's own descriptor of the exporter's)
  uint64_t id;    // buffer id
  bool imported;  // opened from an IPC handle (cuIpcCloseMemHandle, not cuMemFree)
};

struct IpcWire {  // the 64 bytes of a CUipcMemHandle
  char magic[8];
  int32_t pid;
  int32_t fd;
  uint64_t ino;
  uint64_t bytes;
  uint64_t id;
};
static_assert(sizeof(IpcWire) <= sizeof(CUipcMemHandle), "IPC handle");

std::mutex gLock;
std::map<uintptr_t, Mapping> gMaps;  // by base
uint64_t gNextId = 1;
bool gInit = false;
thread_local CUcontext tCurrent = nullptr;
int gPrimary;  // the primary context is the address of this

size_t roundChunks(size_t n) { return ((n ? n : 1) + kChunk - 1) / kChunk * kChunk; }

// The mapping holding [p, p+n), or nullptr. Caller holds gLock.
Mapping* find(uintptr_t p, size_t n, uintptr_t* base) {
  auto it = gMaps.upper_bound(p);
  if (it == gMaps.begin()) return nullptr;
  --it;
  if (p - it->first >= it->second.bytes || n > it->second.bytes - (p - it->first)) return nullptr;
  *base = it->first;
  return &it->second;
}

// Maps fd (mapped bytes) PROT_NONE at a fresh 2 MiB-aligned address; 0 on failure.
uintptr_t mapChunks(int fd, size_t mapped) {
  void* raw = mmap(nullptr, mapped + kChunk, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return 0;
  const uintptr_t r = reinterpret_cast<uintptr_t>(raw);
  const uintptr_t base = (r + kChunk - 1) / kChunk * kChunk;
  if (base > r) munmap(raw, base - r);
  if (r + kChunk > base) munmap(reinterpret_cast<void*>(base + mapped), r + kChunk - base);
  void* p = mmap(reinterpret_cast<void*>(base), mapped, PROT_NONE, MAP_SHARED | MAP_FIXED, fd, 0);
  if (p == MAP_FAILED) {
    munmap(reinterpret_cast<void*>(base), mapped);
    return 0;
  }
  return base;
}

// Opens (or closes) the CPU's access to the device mapping around p, if p is device memory.
void access(uintptr_t p, size_t n, bool open) {
  uintptr_t base;
  if (Mapping* m = find(p, n ? n : 1, &base))
    mprotect(reinterpret_cast<void*>(base), m->mapped, open ? PROT_READ | PROT_WRITE : PROT_NONE);
}

// False when [p, p+n) starts in device memory but runs past its allocation. Caller holds gLock.
bool inBounds(uintptr_t p, size_t n) {
  auto it = gMaps.upper_bound(p);
  if (it == gMaps.begin()) return true;
  --it;
  if (p - it->first >= it->second.mapped) return true;  // not device memory
  return p - it->first < it->second.bytes && n <= it->second.bytes - (p - it->first);
}

// A copy between any two of host and device memory; out-of-range device pointers fail.
CUresult copy(uintptr_t dst, uintptr_t src, size_t n) {
  if (n == 0) return CUDA_SUCCESS;
  std::lock_guard<std::mutex> g(gLock);
  if (!gInit) return CUDA_ERROR_NOT_INITIALIZED;
  if (!inBounds(dst, n) || !inBounds(src, n)) return CUDA_ERROR_INVALID_VALUE;
  access(src, n, true);
  access(dst, n, true);
  memmove(reinterpret_cast<void*>(dst), reinterpret_cast<const void*>(src), n);
  access(src, n, false);
  access(dst, n, false);
  return CUDA_SUCCESS;
}

}  // namespace

extern "C" {

CUresult cuInit(unsigned int flags) {
  if (flags != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> g(gLock);
  gInit = true;
  return CUDA_SUCCESS;
}

CUresult cuGetErrorName(CUresult error, const char** str) {
  switch (error) {
    case CUDA_SUCCESS: *str = "CUDA_SUCCESS"; break;
    case CUDA_ERROR_INVALID_VALUE: *str = "CUDA_ERROR_INVALID_VALUE"; break;
    case CUDA_ERROR_OUT_OF_MEMORY: *str = "CUDA_ERROR_OUT_OF_MEMORY"; break;
    case CUDA_ERROR_NOT_INITIALIZED: *str = "CUDA_ERROR_NOT_INITIALIZED"; break;
    case CUDA_ERROR_INVALID_HANDLE: *str = "CUDA_ERROR_INVALID_HANDLE"; break;
    case CUDA_ERROR_INVALID_CONTEXT: *str = "CUDA_ERROR_INVALID_CONTEXT"; break;
    case CUDA_ERROR_NO_BINARY_FOR_GPU: *str = "CUDA_ERROR_NO_BINARY_FOR_GPU"; break;
    case CUDA_ERROR_NOT_SUPPORTED: *str = "CUDA_ERROR_NOT_SUPPORTED"; break;
    default: *str = "CUDA_ERROR_UNKNOWN"; return CUDA_ERROR_INVALID_VALUE;
  }
  return CUDA_SUCCESS;
}

CUresult cuDeviceGetCount(int* count) {
  *count = 1;
  return gInit ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

CUresult cuDeviceGet(CUdevice* device, int ordinal) {
  if (ordinal != 0) return CUDA_ERROR_INVALID_DEVICE;
  *device = 0;
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRetain(CUcontext* ctx, CUdevice dev) {
  if (dev != 0) return CUDA_ERROR_INVALID_DEVICE;
  *ctx = reinterpret_cast<CUcontext>(&gPrimary);
  return CUDA_SUCCESS;
}

CUresult cuDevicePrimaryCtxRelease(CUdevice dev) {
  return dev == 0 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

CUresult cuCtxGetCurrent(CUcontext* ctx) {
  *ctx = tCurrent;
  return CUDA_SUCCESS;
}

CUresult cuCtxSetCurrent(CUcontext ctx) {
  tCurrent = ctx;
  return CUDA_SUCCESS;
}

CUresult cuCtxSynchronize() { return CUDA_SUCCESS; }

CUresult cuPointerGetAttributes(unsigned int n, CUpointer_attribute* attrs, void** data,
                                CUdeviceptr ptr) {
  std::lock_guard<std::mutex> g(gLock);
  uintptr_t base = 0;
  const Mapping* m = find(static_cast<uintptr_t>(ptr), 1, &base);
  for (unsigned i = 0; i < n; ++i) {
    switch (attrs[i]) {
      case CU_POINTER_ATTRIBUTE_MEMORY_TYPE:  // host memory: 0, as for unregistered memory
        *static_cast<unsigned*>(data[i]) = m ? CU_MEMORYTYPE_DEVICE : 0;
        break;
      case CU_POINTER_ATTRIBUTE_IS_MANAGED: *static_cast<unsigned*>(data[i]) = 0; break;
      case CU_POINTER_ATTRIBUTE_BUFFER_ID:
        *static_cast<unsigned long long*>(data[i]) = m ? m->id : 0;
        break;
      case CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL: *static_cast<int*>(data[i]) = m ? 0 : -2; break;
      case CU_POINTER_ATTRIBUTE_RANGE_START_ADDR:
        *static_cast<CUdeviceptr*>(data[i]) = m ? base : 0;
        break;
      case CU_POINTER_ATTRIBUTE_RANGE_SIZE: *static_cast<size_t*>(data[i]) = m ? m->bytes : 0; break;
      default: return CUDA_ERROR_INVALID_VALUE;
    }
  }
  return CUDA_SUCCESS;
}

CUresult cuStreamCreate(CUstream* s, unsigned int) {
  *s = reinterpret_cast<CUstream>(new int(0));
  return CUDA_SUCCESS;
}
CUresult cuStreamDestroy(CUstream s) {
  delete reinterpret_cast<int*>(s);
  return CUDA_SUCCESS;
}
CUresult cuStreamSynchronize(CUstream) { return CUDA_SUCCESS; }
CUresult cuEventCreate(CUevent* e, unsigned int) {
  *e = reinterpret_cast<CUevent>(new int(0));
  return CUDA_SUCCESS;
}
CUresult cuEventDestroy(CUevent e) {
  delete reinterpret_cast<int*>(e);
  return CUDA_SUCCESS;
}
CUresult cuEventRecord(CUevent, CUstream) { return CUDA_SUCCESS; }
CUresult cuEventQuery(CUevent) { return CUDA_SUCCESS; }  // every operation completed in its call

CUresult cuMemcpyAsync(CUdeviceptr dst, CUdeviceptr src, size_t n, CUstream) {
  return copy(static_cast<uintptr_t>(dst), static_cast<uintptr_t>(src), n);
}
CUresult cuMemcpyHtoD(CUdeviceptr dst, const void* src, size_t n) {
  return copy(static_cast<uintptr_t>(dst), reinterpret_cast<uintptr_t>(src), n);
}
CUresult cuMemcpyDtoH(void* dst, CUdeviceptr src, size_t n) {
  return copy(reinterpret_cast<uintptr_t>(dst), static_cast<uintptr_t>(src), n);
}

CUresult cuMemsetD8(CUdeviceptr dst, unsigned char value, size_t n) {
  std::lock_guard<std::mutex> g(gLock);
  uintptr_t base;
  if (n && !find(static_cast<uintptr_t>(dst), n, &base)) return CUDA_ERROR_INVALID_VALUE;
  access(static_cast<uintptr_t>(dst), n, true);
  memset(reinterpret_cast<void*>(dst), value, n);
  access(static_cast<uintptr_t>(dst), n, false);
  return CUDA_SUCCESS;
}

CUresult cuMemAlloc(CUdeviceptr* out, size_t bytes) {
  std::lock_guard<std::mutex> g(gLock);
  if (!gInit) return CUDA_ERROR_NOT_INITIALIZED;
  if (bytes == 0) return CUDA_ERROR_INVALID_VALUE;
  const size_t mapped = roundChunks(bytes);
  const int fd = memfd_create("softgpu", MFD_CLOEXEC);  // importers open it through /proc
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  if (ftruncate(fd, static_cast<off_t>(mapped)) != 0) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  const uintptr_t base = mapChunks(fd, mapped);
  if (!base) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  gMaps[base] = Mapping{bytes, mapped, fd, gNextId++, false};
  *out = base;
  return CUDA_SUCCESS;
}

CUresult cuMemFree(CUdeviceptr p) {
  std::lock_guard<std::mutex> g(gLock);
  auto it = gMaps.find(static_cast<uintptr_t>(p));
  if (it == gMaps.end() || it->second.imported) return CUDA_ERROR_INVALID_VALUE;
  munmap(reinterpret_cast<void*>(it->first), it->second.mapped);
  close(it->second.fd);
  gMaps.erase(it);
  return CUDA_SUCCESS;
}

CUresult cuMemHostAlloc(void** p, size_t bytes, unsigned int) {
  return posix_memalign(p, 4096, bytes ? bytes : 1) == 0 ? CUDA_SUCCESS : CUDA_ERROR_OUT_OF_MEMORY;
}
CUresult cuMemFreeHost(void* p) {
  free(p);
  return CUDA_SUCCESS;
}

CUresult cuIpcGetMemHandle(CUipcMemHandle* h, CUdeviceptr p) {
  std::lock_guard<std::mutex> g(gLock);
  auto it = gMaps.find(static_cast<uintptr_t>(p));
  if (it == gMaps.end() || it->second.imported) return CUDA_ERROR_INVALID_VALUE;
  struct stat st;
  if (fstat(it->second.fd, &st) != 0) return CUDA_ERROR_INVALID_VALUE;
  IpcWire w{};
  memcpy(w.magic, kMagic, sizeof w.magic);
  w.pid = getpid();
  w.fd = it->second.fd;
  w.ino = st.st_ino;
  w.bytes = it->second.bytes;
  w.id = it->second.id;
  memset(h, 0, sizeof *h);
  memcpy(h->reserved, &w, sizeof w);
  return CUDA_SUCCESS;
}

CUresult cuIpcOpenMemHandle(CUdeviceptr* out, CUipcMemHandle h, unsigned int) {
  IpcWire w;
  memcpy(&w, h.reserved, sizeof w);
  if (memcmp(w.magic, kMagic, sizeof w.magic) != 0) return CUDA_ERROR_INVALID_VALUE;
  if (w.pid == getpid()) return CUDA_ERROR_INVALID_CONTEXT;  // as CUDA: not in the exporter
  char path[64];
  snprintf(path, sizeof path, "/proc/%d/fd/%d", w.pid, w.fd);
  const int fd = open(path, O_RDWR | O_CLOEXEC);
  struct stat st;
  if (fd < 0) return CUDA_ERROR_INVALID_HANDLE;  // exporter gone or memory freed
  if (fstat(fd, &st) != 0 || st.st_ino != w.ino) {
    close(fd);
    return CUDA_ERROR_INVALID_HANDLE;  // the descriptor now names another file
  }
  std::lock_guard<std::mutex> g(gLock);
  const size_t mapped = roundChunks(w.bytes);
  const uintptr_t base = mapChunks(fd, mapped);
  if (!base) {
    close(fd);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  gMaps[base] = Mapping{w.bytes, mapped, fd, gNextId++, true};
  *out = base;
  return CUDA_SUCCESS;
}

CUresult cuIpcCloseMemHandle(CUdeviceptr p) {
  std::lock_guard<std::mutex> g(gLock);
  auto it = gMaps.find(static_cast<uintptr_t>(p));
  if (it == gMaps.end() || !it->second.imported) return CUDA_ERROR_INVALID_VALUE;
  munmap(reinterpret_cast<void*>(it->first), it->second.mapped);
  close(it->second.fd);
  gMaps.erase(it);
  return CUDA_SUCCESS;
}

CUresult cuMemGetHandleForAddressRange(void* handle, CUdeviceptr p, size_t size,
                                       CUmemRangeHandleType type, unsigned long long flags) {
  const char* env = getenv("SOFTGPU_DMABUF");
  if (env && strcmp(env, "0") == 0) return CUDA_ERROR_NOT_SUPPORTED;
  if (type != CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD || flags != 0) return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> g(gLock);
  auto it = gMaps.find(static_cast<uintptr_t>(p));  // the memfd's offset 0 is the base
  if (it == gMaps.end() || size == 0 || size > it->second.mapped) return CUDA_ERROR_INVALID_VALUE;
  const int fd = dup(it->second.fd);
  if (fd < 0) return CUDA_ERROR_OUT_OF_MEMORY;
  *static_cast<int*>(handle) = fd;
  return CUDA_SUCCESS;
}

// No kernels on the software GPU (rrt reduces device buffers on the host then).
CUresult cuModuleLoadData(CUmodule*, const void*) { return CUDA_ERROR_NO_BINARY_FOR_GPU; }
CUresult cuModuleGetFunction(CUfunction*, CUmodule, const char*) {
  return CUDA_ERROR_INVALID_HANDLE;
}
CUresult cuModuleUnload(CUmodule) { return CUDA_ERROR_INVALID_HANDLE; }
CUresult cuLaunchKernel(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned,
                        unsigned, CUstream, void**, void**) {
  return CUDA_ERROR_INVALID_HANDLE;
}

}  // extern "C"
