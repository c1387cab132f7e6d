// A test double of gpu::Driver: "device memory" is host memory the CPU cannot touch (a memfd
// mmap'ed PROT_NONE; the double opens it only inside its own copies; an RDMA device reaches it
// through the memfd as its dma-buf, as a NIC reaches GPU memory through the exporter's pages), so a test fails with SIGSEGV if
// rrt ever dereferences a device pointer. Copies are queued on the stream and run either at
// once (auto mode) or when the test says (manual mode), so pipelines can be checked step by
// step. Every call is counted; copies are logged.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <vector>

#include "runtime/gpu/driver.h"

namespace rrt::gpu::test {

class FakeDriver final : public Driver {
 public:
  FakeDriver() = default;
  ~FakeDriver() override;

  // Device allocations (page-granular, PROT_NONE between copies).
  void* devAlloc(size_t bytes);
  // At a given address (one a devFree gave back): a new allocation, new buffer id, same place.
  void* devAllocAt(void* at, size_t bytes);
  void devFree(void* p);
  // Test access to device bytes (opens the protection around a memcpy).
  void devWrite(void* dst, const void* src, size_t n);
  void devRead(void* dst, const void* src, size_t n);

  // Copy execution.
  bool manual = false;    // queue copies until completeNext / completeAll
  size_t completeNext();  // runs the oldest queued copy; returns how many are left
  void completeAll();
  size_t queued() const { return queue_.size(); }
  struct CopyLog {
    uintptr_t dst, src;
    size_t n;
    bool done;
  };
  std::vector<CopyLog> log;  // in issue order
  bool failCopies = false;   // memcpyAsync returns ErrArg (a freed pointer)
  int failCopyAfter = -1;    // >= 0: that many more memcpyAsync succeed, then one fails
  bool failIpcOpen = false;  // ipcOpen returns ErrTransport
  bool dmabufExport = true;  // dmabuf() exports (each allocation is a memfd: its dma-buf)
  uint64_t dmabufExports = 0;
  bool failReduces = false;    // reduce (n > 0) returns ErrTransport
  bool reduceOnDevice = true;  // reduce implements the predefined ops (else ErrUnsupported)
  uint64_t reduces = 0, memAllocs = 0, memFrees = 0;

  uint64_t pointerQueries = 0, hostAllocs = 0, hostFrees = 0, ipcGets = 0, ipcOpens = 0,
           ipcCloses = 0, streams = 0, syncs = 0;

  const char* name() const override { return "fake"; }
  int deviceCount() const override { return 1; }
  Status pointerInfo(const void* p, PointerInfo* info) override;
  Status streamCreate(Stream* out) override;
  void streamDestroy(Stream) override {}
  Status streamSynchronize(Stream) override;
  Status eventCreate(Event* out) override;
  void eventDestroy(Event e) override;
  Status eventRecord(Event e, Stream s) override;
  Status eventQuery(Event e) override;
  Status memcpyAsync(void* dst, const void* src, size_t len, Stream s) override;
  Status hostAlloc(size_t len, void** out) override;
  Status memAlloc(size_t len, void** out) override {
    ++memAllocs;
    *out = devAlloc(len);
    return *out ? Status::Ok : Status::ErrNoMemory;
  }
  void memFree(void* p) override {
    ++memFrees;
    devFree(p);
  }
  void hostFree(void* p) override;
  Status ipcGetHandle(const void* base, IpcHandle* out) override;
  Status ipcOpen(const IpcHandle& h, void** base) override;
  Status ipcClose(void* base) override;
  Status dmabuf(const void* addr, size_t len, int* fd, uint64_t* offset) override;
  // The device kernels' semantics (kernels.cu) through the host kernels of runtime/coll, on
  // device memory; ordered with the copies (it runs when the queue before it has run).
  Status reduce(int op, int type, const void* in, void* inout, size_t n, Stream s) override;

  size_t liveDeviceAllocations() const { return dev_.size(); }
  size_t liveIpcMappings() const { return mappings_.size(); }
  // An IPC mapping's local address -> the device address it stands for (copies translate it).
  struct Mapping {
    uintptr_t target;  // the exporter's allocation, or a private copy of it once that was freed
    size_t bytes, mapped;
    uint64_t id;
    bool zombie;       // the exporter freed the allocation: target is the old bytes, kept
  };

 private:
  struct Alloc {
    size_t bytes, mapped;
    uint64_t id;
    int fd;  // the memfd behind the mapping (what dmabuf() hands out)
  };
  void* mapAlloc(void* at, size_t bytes);
  struct Event_ {
    uint64_t waitFor = 0;  // copies issued before the record
  };
  const Alloc* find(uintptr_t a, uintptr_t* base) const;
  void run(const CopyLog& c);
  void protect(uintptr_t a, size_t n, bool open);

  std::map<uintptr_t, Alloc> dev_;
  std::deque<size_t> queue_;  // indices into log
  uint64_t issued_ = 0, completed_ = 0;
  uint64_t nextId_ = 1;
  uintptr_t translate(uintptr_t a, size_t n, bool* ok) const;
  std::map<uintptr_t, Mapping> mappings_;  // opened IPC mappings by local base
  struct Reduce {
    int op, type;
    uintptr_t in, inout;
    size_t n;
  };
  std::map<size_t, Reduce> reduceOps_;  // log index of a queued reduce -> what it does
};

}  // namespace rrt::gpu::test
