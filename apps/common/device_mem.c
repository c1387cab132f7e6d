/* Device buffers through the dlopen'ed CUDA driver (see device_mem.h). The prototypes are the
 * driver API's stable ABI (versioned names as cuda.h maps them), declared here so that no CUDA
 * header is needed. */
#include "device_mem.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

typedef int CUresult;
typedef unsigned long long CUdeviceptr;

static struct {
  int state; /* 0 = not tried, 1 = ready, -1 = unavailable */
  const char *why;
  CUresult (*init)(unsigned);
  CUresult (*count)(int *);
  CUresult (*get)(int *, int);
  CUresult (*retain)(void **, int);
  CUresult (*set)(void *);
  CUresult (*alloc)(CUdeviceptr *, size_t);
  CUresult (*free)(CUdeviceptr);
  CUresult (*memset8)(CUdeviceptr, unsigned char, size_t);
  CUresult (*htod)(CUdeviceptr, const void *, size_t);
  CUresult (*dtoh)(void *, CUdeviceptr, size_t);
  CUresult (*sync)(void);
} cu;

#define RESOLVE(field, name)                      \
  do {                                            \
    *(void **)(&cu.field) = dlsym(lib, name);     \
    if (!cu.field) return fail("libcuda.so.1 lacks " name); \
  } while (0)

static const char *fail(const char *why) {
  cu.state = -1;
  cu.why = why;
  return why;
}

const char *device_mem_open(void) {
  if (cu.state) return cu.state > 0 ? NULL : cu.why;
  void *lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return fail("no CUDA driver (libcuda.so.1 not found)");
  RESOLVE(init, "cuInit");
  RESOLVE(count, "cuDeviceGetCount");
  RESOLVE(get, "cuDeviceGet");
  RESOLVE(retain, "cuDevicePrimaryCtxRetain");
  RESOLVE(set, "cuCtxSetCurrent");
  RESOLVE(alloc, "cuMemAlloc_v2");
  RESOLVE(free, "cuMemFree_v2");
  RESOLVE(memset8, "cuMemsetD8_v2");
  RESOLVE(htod, "cuMemcpyHtoD_v2");
  RESOLVE(dtoh, "cuMemcpyDtoH_v2");
  RESOLVE(sync, "cuCtxSynchronize");
  if (cu.init(0) != 0) return fail("cuInit failed (no usable GPU)");
  int n = 0, dev = 0;
  if (cu.count(&n) != 0 || n <= 0) return fail("no CUDA device");
  void *ctx = NULL;
  if (cu.get(&dev, 0) != 0 || cu.retain(&ctx, dev) != 0 || cu.set(ctx) != 0)
    return fail("cannot create a context on device 0");
  cu.state = 1;
  return NULL;
}

void *device_mem_alloc(size_t bytes) {
  CUdeviceptr p = 0;
  if (cu.state <= 0 || cu.alloc(&p, bytes ? bytes : 1) != 0) return NULL;
  return (void *)(uintptr_t)p;
}

void device_mem_free(void *p) {
  if (cu.state > 0 && p) cu.free((CUdeviceptr)(uintptr_t)p);
}

int device_mem_fill(void *p, int byte, size_t n) {
  if (cu.state <= 0) return -1;
  if (n && cu.memset8((CUdeviceptr)(uintptr_t)p, (unsigned char)byte, n) != 0) return -1;
  return cu.sync() == 0 ? 0 : -1;
}

int device_mem_to_host(void *dst, const void *src, size_t n) {
  if (cu.state <= 0) return -1;
  return n && cu.dtoh(dst, (CUdeviceptr)(uintptr_t)src, n) != 0 ? -1 : 0;
}

int device_mem_from_host(void *dst, const void *src, size_t n) {
  if (cu.state <= 0) return -1;
  return n && cu.htod((CUdeviceptr)(uintptr_t)dst, src, n) != 0 ? -1 : 0;
}

void *device_mem_or_host_alloc(int on_device, size_t bytes) {
  if (on_device) return device_mem_alloc(bytes);
  void *p = NULL;
  size_t page = (size_t)sysconf(_SC_PAGESIZE);
  return posix_memalign(&p, page, bytes ? bytes : 1) == 0 ? p : NULL;
}

void device_mem_or_host_free(int on_device, void *p) {
  if (on_device) device_mem_free(p);
  else free(p);
}
