// rrt's GPU support as the rest of the runtime sees it: is CUDA on, is this buffer device memory,
// and the staging of device buffers for the protocol layer and the collectives.
//
// Lifecycle: init() at rrt_init reads RRT_CUDA (auto|on|off). auto and on load libcuda with dlopen
// (cuda_driver.cc); with no driver or no device, auto leaves GPU support off without a word and
// on makes rrt_init fail. Tests install a Driver of their own (installDriver). shutdown() at
// rrt_finalize.
//
// Cost on the host fast path: enabled() is one load of a global flag; only when it is set is a
// buffer classified (memory-type cache: one table probe for host memory already seen).
//
// Stream ordering: rrt copies device memory on its own blocking stream, which waits for work the
// user queued earlier on the legacy default stream; before a send or collective reads a device
// buffer, the user's work on the default stream is therefore complete. Work on other streams
// (or with per-thread default streams) must be synchronised by the user before the call.
// Received data is in the device buffer when the receive completes (rrt waits for its copy).
#pragma once

#include <cstddef>

#include "runtime/core/request.h"
#include "runtime/core/status.h"
#include "runtime/gpu/driver.h"
#include "runtime/gpu/protocol.h"
#include "runtime/memory/mem_type_cache.h"

namespace rrt::gpu {

extern bool gEnabled;
inline bool enabled() { return gEnabled; }

Status init();
void shutdown();
// Tests: use d (not owned) as the driver, as if init() had loaded it; nullptr uninstalls.
void installDriver(Driver* d);
Driver* driver();
// One line for rrt_info: "off (RRT_CUDA=off)", "cuda, 2 devices", "unavailable: <why>".
const char* describe();

memory::MemType classifySlow(const void* p, size_t len);
inline bool isDevice(const void* p, size_t len) {
  return __builtin_expect(gEnabled, 0) && classifySlow(p, len) == memory::MemType::Cuda;
}
memory::MemTypeCache* memTypeCache();

// Copies len bytes between any two buffers (host or device) through rrt's stream and waits.
// Large copies go as a pipeline of chunks in flight. On ErrArg (the driver rejected a cached
// device pointer) the memory-type cache entries of both ranges are dropped.
Status copy(void* dst, const void* src, size_t len);

// Host staging memory (page-locked when the driver gives it), pooled by power-of-two size.
void* hostBuffer(size_t bytes, size_t* capacity);
void releaseHostBuffer(void* p, size_t capacity);

// The path a message would take (see protocol.h; rrt_info and the tests).
Proto protoFor(memory::MemType send, memory::MemType recv, size_t bytes, bool sameNode,
               bool transportZcopyCuda = false);

// The path of a send from buf, classified device by isDevice(): Bounce up to the bounce limit;
// above it the driver is asked once more (pointerInfo: the memory-type cache learns nothing when
// the application frees device memory, so a large message, which may go by IPC, never trusts a
// cached answer): Host when buf is no longer device memory (the cache is corrected), else Ipc
// (same node, another process, RRT_CUDA_IPC on), GdrRdma (the peer's transport registers device
// memory: transportZcopyCuda) or Pipelined. *info: the driver's answer.
Proto sendProto(const void* buf, size_t bytes, bool sameNode, bool selfPeer, bool transportZcopyCuda,
                PointerInfo* info);
// The same check for a receive buffer classified device: false when it is host memory after all.
bool recvIsDevice(void* buf, size_t bytes);
size_t bounceLimit();

// Device reductions for collectives that run on the device: inout = in op inout over n base
// elements, on rrt's stream (ordered after the copies before it), waited for. ErrUnsupported
// when the kernels have no (op, type).
Status deviceReduce(int op, int type, const void* in, void* inout, size_t n);
// Whether the device kernels have (op, type) (a zero-length probe of Driver::reduce).
bool deviceReduces(int op, int type);
// Device scratch memory (nullptr when the driver has none to give).
void* deviceAlloc(size_t bytes);
void deviceFree(void* p);

// rrt's copy stream (a blocking stream, made on first use).
Status copyStream(Stream* out);

// Point-to-point staging. stageSend: r->buf is device memory; copies it to a host buffer that
// replaces r->buf until the send completes. stageRecv: r->buf is device memory; the receive
// lands in a host buffer. unstage (called by the protocol layer just before the request
// completes): copies received bytes to the device buffer, restores r->buf, frees the staging;
// returns s, or the copy's error.
Status stageSend(core::Request* r);
Status stageRecv(core::Request* r);
Status unstage(core::Request* r, Status s);
// The device buffer behind a staged receive (nullptr when r is not staged).
void* stagedUser(const core::Request* r);
// Ends a staging whose data already went to the device by other means (IPC copy, pipelined
// receive): restores r->buf, frees the staging, copies nothing.
void dropStage(core::Request* r);

}  // namespace rrt::gpu
