// libcuda through dlopen. Every entry point is a function pointer whose type is taken from the
// declaration in cuda.h (decltype), and whose symbol name is the one cuda.h maps the API name to
// (e.g. cuIpcOpenMemHandle -> cuIpcOpenMemHandle_v2), so the ABI is the header's.
#include "runtime/gpu/cuda_driver.h"

#include <cuda.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

#include "runtime/core/log.h"

#if defined(RRT_HAVE_CUDA_KERNELS)
extern "C" {
extern const unsigned char rrt_gpu_fatbin[];
}
#endif

#define RRT_CU_STR2(x) #x
#define RRT_CU_STR(x) RRT_CU_STR2(x)

namespace rrt::gpu {
namespace {

// The entry points rrt uses: X(api name).
#define RRT_CUDA_ENTRY_POINTS(X)                                                          \
  X(cuInit) X(cuGetErrorName) X(cuDeviceGetCount) X(cuDeviceGet)                            \
  X(cuDevicePrimaryCtxRetain) X(cuDevicePrimaryCtxRelease) X(cuCtxGetCurrent)               \
  X(cuCtxSetCurrent) X(cuPointerGetAttributes) X(cuStreamCreate) X(cuStreamDestroy)         \
  X(cuStreamSynchronize) X(cuEventCreate) X(cuEventDestroy) X(cuEventRecord)                \
  X(cuEventQuery) X(cuMemcpyAsync) X(cuMemHostAlloc) X(cuMemFreeHost) X(cuMemAlloc) X(cuMemFree) X(cuIpcGetMemHandle)  \
  X(cuIpcOpenMemHandle) X(cuIpcCloseMemHandle) X(cuModuleLoadData) X(cuModuleGetFunction)   \
  X(cuModuleUnload) X(cuLaunchKernel)

struct Api {
#define RRT_CU_FIELD(fn) decltype(&::fn) fn = nullptr;
  RRT_CUDA_ENTRY_POINTS(RRT_CU_FIELD)
#undef RRT_CU_FIELD
};

class CudaDriver final : public Driver {
 public:
  CudaDriver(void* lib, const Api& api, int devices) : lib_(lib), cu_(api), devices_(devices) {}
  ~CudaDriver() override {
    if (module_) cu_.cuModuleUnload(module_);
    if (ctxDevice_ >= 0) cu_.cuDevicePrimaryCtxRelease(ctxDev_);
    // lib_ stays loaded: other code in the process (the user's) may use the driver.
  }
  const char* name() const override { return "cuda"; }
  int deviceCount() const override { return devices_; }

  Status pointerInfo(const void* p, PointerInfo* info) override {
    CUpointer_attribute attrs[] = {CU_POINTER_ATTRIBUTE_MEMORY_TYPE, CU_POINTER_ATTRIBUTE_IS_MANAGED,
                                   CU_POINTER_ATTRIBUTE_BUFFER_ID, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL,
                                   CU_POINTER_ATTRIBUTE_RANGE_START_ADDR,
                                   CU_POINTER_ATTRIBUTE_RANGE_SIZE};
    unsigned memType = 0, managed = 0;
    unsigned long long bufferId = 0;
    int ordinal = -1;
    CUdeviceptr start = 0;
    size_t size = 0;
    void* data[] = {&memType, &managed, &bufferId, &ordinal, &start, &size};
    CUresult rc = cu_.cuPointerGetAttributes(6, attrs, data, reinterpret_cast<CUdeviceptr>(p));
    *info = PointerInfo{};
    if (rc != CUDA_SUCCESS || memType != CU_MEMORYTYPE_DEVICE) return Status::Ok;  // host
    info->type = memory::MemType::Cuda;
    info->base = static_cast<uintptr_t>(start);
    info->size = size;
    info->bufferId = bufferId;
    info->device = ordinal;
    (void)managed;  // managed memory is device memory to us: moved with the driver's copies
    return Status::Ok;
  }

  Status dmabuf(const void* addr, size_t len, int* fd, uint64_t* offset) override {
    if (!getHandle_) return Status::ErrUnsupported;  // driver older than CUDA 11.7
    // The range must be host-page aligned; the dma-buf starts at the aligned address.
    const uintptr_t page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
    const uintptr_t a = reinterpret_cast<uintptr_t>(addr);
    const uintptr_t start = a & ~(page - 1);
    const uintptr_t end = (a + len + page - 1) & ~(page - 1);
    RRT_TRY(context());
    int out = -1;
    RRT_TRY(check(getHandle_(&out, static_cast<CUdeviceptr>(start), end - start,
                             CU_MEM_RANGE_HANDLE_TYPE_DMA_BUF_FD, 0),
                  "cuMemGetHandleForAddressRange"));
    *fd = out;
    *offset = a - start;
    return Status::Ok;
  }
  // Optional (CUDA 11.7 drivers on): resolved apart from the required entry points.
  void setDmabufExport(void* fn) { getHandle_ = reinterpret_cast<GetHandleFn>(fn); }

  Status streamCreate(Stream* out) override {
    RRT_TRY(context());
    CUstream s = nullptr;
    RRT_TRY(check(cu_.cuStreamCreate(&s, CU_STREAM_DEFAULT), "cuStreamCreate"));
    *out = s;
    return Status::Ok;
  }
  void streamDestroy(Stream s) override { cu_.cuStreamDestroy(static_cast<CUstream>(s)); }
  Status streamSynchronize(Stream s) override {
    return check(cu_.cuStreamSynchronize(static_cast<CUstream>(s)), "cuStreamSynchronize");
  }
  Status eventCreate(Event* out) override {
    RRT_TRY(context());
    CUevent e = nullptr;
    RRT_TRY(check(cu_.cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate"));
    *out = e;
    return Status::Ok;
  }
  void eventDestroy(Event e) override { cu_.cuEventDestroy(static_cast<CUevent>(e)); }
  Status eventRecord(Event e, Stream s) override {
    return check(cu_.cuEventRecord(static_cast<CUevent>(e), static_cast<CUstream>(s)), "cuEventRecord");
  }
  Status eventQuery(Event e) override {
    CUresult rc = cu_.cuEventQuery(static_cast<CUevent>(e));
    if (rc == CUDA_ERROR_NOT_READY) return Status::InProgress;
    return check(rc, "cuEventQuery");
  }
  Status memcpyAsync(void* dst, const void* src, size_t len, Stream s) override {
    RRT_TRY(context());
    return check(cu_.cuMemcpyAsync(reinterpret_cast<CUdeviceptr>(dst),
                                   reinterpret_cast<CUdeviceptr>(src), len,
                                   static_cast<CUstream>(s)),
                 "cuMemcpyAsync");
  }
  Status hostAlloc(size_t len, void** out) override {
    RRT_TRY(context());
    return check(cu_.cuMemHostAlloc(out, len, CU_MEMHOSTALLOC_PORTABLE), "cuMemHostAlloc");
  }
  void hostFree(void* p) override { cu_.cuMemFreeHost(p); }
  Status memAlloc(size_t len, void** out) override {
    RRT_TRY(context());
    CUdeviceptr p = 0;
    RRT_TRY(check(cu_.cuMemAlloc(&p, len ? len : 1), "cuMemAlloc"));
    *out = reinterpret_cast<void*>(p);
    return Status::Ok;
  }
  void memFree(void* p) override { cu_.cuMemFree(reinterpret_cast<CUdeviceptr>(p)); }

  Status ipcGetHandle(const void* base, IpcHandle* out) override {
    static_assert(sizeof(CUipcMemHandle) == sizeof(IpcHandle), "IPC handle size");
    CUipcMemHandle h;
    RRT_TRY(check(cu_.cuIpcGetMemHandle(&h, reinterpret_cast<CUdeviceptr>(base)), "cuIpcGetMemHandle"));
    memcpy(out->bytes, &h, sizeof h);
    return Status::Ok;
  }
  Status ipcOpen(const IpcHandle& h, void** base) override {
    RRT_TRY(context());
    CUipcMemHandle ch;
    memcpy(&ch, h.bytes, sizeof ch);
    CUdeviceptr p = 0;
    RRT_TRY(check(cu_.cuIpcOpenMemHandle(&p, ch, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS),
                  "cuIpcOpenMemHandle"));
    *base = reinterpret_cast<void*>(p);
    return Status::Ok;
  }
  Status ipcClose(void* base) override {
    return check(cu_.cuIpcCloseMemHandle(reinterpret_cast<CUdeviceptr>(base)), "cuIpcCloseMemHandle");
  }

  Status reduce(int op, int type, const void* in, void* inout, size_t n, Stream s) override {
#if defined(RRT_HAVE_CUDA_KERNELS)
    if (op < 0 || op >= kOps || type < 0 || type >= kTypes) return Status::ErrUnsupported;
    RRT_TRY(loadKernels());
    CUfunction f = kernels_[op][type];
    if (!f) return Status::ErrUnsupported;
    if (n == 0) return Status::Ok;
    unsigned long long count = n;
    void* args[] = {&in, &inout, &count};
    const unsigned threads = 256;
    unsigned long long blocks = (n + threads - 1) / threads;
    if (blocks > 65535ull * 8) blocks = 65535ull * 8;  // grid-stride loop covers the rest
    return check(cu_.cuLaunchKernel(f, static_cast<unsigned>(blocks), 1, 1, threads, 1, 1, 0,
                                    static_cast<CUstream>(s), args, nullptr),
                 "cuLaunchKernel");
#else
    return Status::ErrUnsupported;
#endif
  }

 private:
  static constexpr int kOps = 12, kTypes = 24;  // RRT_PREDEFINED_OP_COUNT-1, _TYPE_COUNT

  Status check(CUresult rc, const char* what) {
    if (rc == CUDA_SUCCESS) return Status::Ok;
    const char* name = "?";
    cu_.cuGetErrorName(rc, &name);
    RRT_DEBUG("%s failed: %s", what, name);
    if (rc == CUDA_ERROR_INVALID_VALUE) return Status::ErrArg;
    if (rc == CUDA_ERROR_OUT_OF_MEMORY) return Status::ErrNoMemory;
    return Status::ErrTransport;
  }

  // The primary context of device 0 unless the thread already has one current (the user's).
  Status context() {
    if (ctxChecked_) return Status::Ok;
    CUcontext cur = nullptr;
    if (cu_.cuCtxGetCurrent(&cur) == CUDA_SUCCESS && cur) {
      ctxChecked_ = true;
      return Status::Ok;
    }
    RRT_TRY(check(cu_.cuDeviceGet(&ctxDev_, 0), "cuDeviceGet"));
    CUcontext ctx = nullptr;
    RRT_TRY(check(cu_.cuDevicePrimaryCtxRetain(&ctx, ctxDev_), "cuDevicePrimaryCtxRetain"));
    ctxDevice_ = 0;
    RRT_TRY(check(cu_.cuCtxSetCurrent(ctx), "cuCtxSetCurrent"));
    ctxChecked_ = true;
    return Status::Ok;
  }

#if defined(RRT_HAVE_CUDA_KERNELS)
  Status loadKernels() {
    if (module_) return Status::Ok;
    if (kernelsFailed_) return Status::ErrUnsupported;
    RRT_TRY(context());
    if (check(cu_.cuModuleLoadData(&module_, rrt_gpu_fatbin), "cuModuleLoadData") != Status::Ok) {
      module_ = nullptr;
      kernelsFailed_ = true;
      RRT_WARN("CUDA reduction kernels do not load on this device: reductions stay on the host");
      return Status::ErrUnsupported;
    }
    for (int op = 0; op < kOps; ++op)
      for (int t = 0; t < kTypes; ++t) {
        char name[48];
        snprintf(name, sizeof name, "rrt_reduce_o%d_t%d", op, t);
        CUfunction f = nullptr;
        if (cu_.cuModuleGetFunction(&f, module_, name) == CUDA_SUCCESS) kernels_[op][t] = f;
      }
    return Status::Ok;
  }
  CUfunction kernels_[kOps][kTypes] = {};
  bool kernelsFailed_ = false;
#endif

  using GetHandleFn = CUresult (*)(void*, CUdeviceptr, size_t, CUmemRangeHandleType,
                                   unsigned long long);
  GetHandleFn getHandle_ = nullptr;
  void* lib_;
  Api cu_;
  int devices_;
  bool ctxChecked_ = false;
  CUdevice ctxDev_ = 0;
  int ctxDevice_ = -1;
  CUmodule module_ = nullptr;
};

}  // namespace

std::unique_ptr<Driver> loadCudaDriver(Status* why, const char** reason) {
  *why = Status::ErrUnsupported;
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    *reason = "libcuda.so.1 not found";
    return nullptr;
  }
  Api api;
  bool complete = true;
#define RRT_CU_RESOLVE(fn)                                                              \
  api.fn = reinterpret_cast<decltype(api.fn)>(dlsym(lib, RRT_CU_STR(fn)));               \
  if (!api.fn) {                                                                          \
    RRT_DEBUG("libcuda lacks %s", RRT_CU_STR(fn));                                        \
    complete = false;                                                                     \
  }
  RRT_CUDA_ENTRY_POINTS(RRT_CU_RESOLVE)
#undef RRT_CU_RESOLVE
  if (!complete) {
    *reason = "libcuda.so.1 lacks entry points rrt needs (driver too old)";
    dlclose(lib);
    return nullptr;
  }
  if (api.cuInit(0) != CUDA_SUCCESS) {
    *reason = "cuInit failed (no usable GPU or driver)";
    return nullptr;  // lib stays loaded: unloading a half-initialised driver is not safe
  }
  int count = 0;
  if (api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count <= 0) {
    *reason = "no CUDA device";
    return nullptr;
  }
  *why = Status::Ok;
  *reason = "";
  auto d = std::make_unique<CudaDriver>(lib, api, count);
  d->setDmabufExport(dlsym(lib, "cuMemGetHandleForAddressRange"));
  return d;
}

}  // namespace rrt::gpu
