// The CUDA driver as rrt uses it: an interface, so that the host-side logic above it (memory-type
// cache, IPC handle cache, staging pipeline, protocol selection) runs against a test double on
// machines without a GPU (tests/unit/gpu_fake_driver.h), and against libcuda, loaded with dlopen
// on first need, everywhere else (cuda_driver.cc).
//
// Contract
//   - Lifecycle: a Driver is created by gpu::init() (RRT_CUDA=auto|on) or installed by a test
//     (gpu::installDriver); it lives until gpu::shutdown(). One thread uses it (rrt is
//     single-threaded).
//   - Memory: "device" pointers are those pointerInfo() reports as MemType::Cuda. rrt never
//     dereferences them on the CPU; it moves their bytes only with memcpyAsync (unified
//     addressing: the driver infers the direction) on a stream it owns.
//   - Streams: streamCreate makes a blocking stream (it waits for earlier work on the legacy
//     default stream, so rrt sees what the user's kernels on the default stream wrote).
//   - Events: eventQuery returns Ok when the work before eventRecord is done, InProgress while it
//     is not, an error when the stream failed.
//   - Return codes: Ok, or ErrUnsupported (no such capability), ErrArg (the driver rejected a
//     pointer: e.g. freed memory; callers invalidate what they cached about it), ErrTransport
//     (any other driver failure), ErrNoMemory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/status.h"
#include "runtime/memory/mem_type.h"

namespace rrt::gpu {

using Stream = void*;
using Event = void*;

// What the driver knows about an address.
struct PointerInfo {
  memory::MemType type = memory::MemType::Host;
  uintptr_t base = 0;     // start of the allocation holding the address (device memory)
  size_t size = 0;        // its length
  uint64_t bufferId = 0;  // unique per allocation in this process: a freed and reallocated
                          // range at the same address gets a new id
  int device = -1;        // ordinal of the owning device
};

// A CUDA IPC memory handle (CUipcMemHandle: 64 opaque bytes).
struct IpcHandle {
  uint8_t bytes[64];
};

class Driver {
 public:
  virtual ~Driver() = default;
  virtual const char* name() const = 0;
  virtual int deviceCount() const = 0;

  // Classifies p. Ok with info->type Host for memory the driver does not own.
  virtual Status pointerInfo(const void* p, PointerInfo* info) = 0;

  virtual Status streamCreate(Stream* out) = 0;
  virtual void streamDestroy(Stream s) = 0;
  virtual Status streamSynchronize(Stream s) = 0;
  virtual Status eventCreate(Event* out) = 0;
  virtual void eventDestroy(Event e) = 0;
  virtual Status eventRecord(Event e, Stream s) = 0;
  virtual Status eventQuery(Event e) = 0;

  // Copies len bytes between any two of host / device memory, ordered on s.
  virtual Status memcpyAsync(void* dst, const void* src, size_t len, Stream s) = 0;

  // Device memory on the current device (cuMemAlloc): scratch of collectives that run on the
  // device.
  virtual Status memAlloc(size_t len, void** out) = 0;
  virtual void memFree(void* p) = 0;

  // Page-locked host memory for bounce buffers (cuMemHostAlloc).
  virtual Status hostAlloc(size_t len, void** out) = 0;
  virtual void hostFree(void* p) = 0;

  // CUDA IPC: export the allocation starting at base; open a peer's handle (returns the local
  // address of the peer allocation's base); close it.
  virtual Status ipcGetHandle(const void* base, IpcHandle* out) = 0;
  virtual Status ipcOpen(const IpcHandle& h, void** base) = 0;
  virtual Status ipcClose(void* base) = 0;

  // GPUDirect RDMA (cuMemGetHandleForAddressRange, DMA_BUF_FD): a dma-buf file descriptor that
  // an RDMA device can register (ibv_reg_dmabuf_mr) for the device memory holding
  // [addr, addr+len). *offset: where addr lies within the dma-buf. The caller owns the fd and
  // closes it once registered. ErrUnsupported when the driver or device cannot export.
  virtual Status dmabuf(const void* addr, size_t len, int* fd, uint64_t* offset) {
    return Status::ErrUnsupported;
  }

  // Device reductions (kernels.cu): inout[i] = in[i] op inout[i] over n base elements of type,
  // ordered on s. ErrUnsupported when the kernels are not built in or (op, type) has none.
  virtual Status reduce(int op, int type, const void* in, void* inout, size_t n, Stream s) = 0;
};

}  // namespace rrt::gpu
