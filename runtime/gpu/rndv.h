// The device side of a rendezvous whose buffer is GPU memory: what the protocol layer
// (runtime/proto) calls when gpu::sendProto chose Ipc or Pipelined for a message.
//
//   IPC (same node, the sender's buffer on a device, large): the sender exports its allocation
//     (ipcExport: an IpcRef from IpcExportCache, validated by a fresh buffer id) and the RTS
//     carries it. The receiver opens it (IpcImportCache: a different buffer id at the same base
//     closes the stale mapping first) and copies device-to-device, or device-to-host, with
//     memcpyAsync on rrt's stream (ipcRecvStart); the receive completes when the copy's event is
//     done (rndvProgress), then the receiver sends FIN and the sender's request completes on it.
//   Pipelined (everything else that is large): the sender streams the device buffer through a
//     ring of pinned host slots, the copy of chunk i+1 overlapping the transfer of chunk i
//     (pipeSendStart; transfer() is the protocol's Data sender). A receiver with a device
//     buffer copies each chunk to the device as soon as it has arrived in the host staging
//     buffer (pipeRecvStart; the arrival test is the protocol's).
//
// Each operation's state hangs off Request::gpuOp (pooled; allocated when a device rendezvous
// starts, never on the host fast path) until rndvEnd. rndvProgress: Ok when done, InProgress
// while not, an error when a driver call failed (the caller ends or falls back; nothing waits
// for ever). Single-threaded.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/request.h"
#include "runtime/core/status.h"
#include "runtime/gpu/ipc_cache.h"
#include "runtime/gpu/pipeline.h"

namespace rrt::gpu {

// What the RTS of an IPC rendezvous says about the sender's buffer (proto/wire.h: IpcRts).
struct IpcRef {
  IpcKey key;
  uint64_t allocSize = 0;  // length of the allocation at key.base
  uint64_t offset = 0;     // the message's first byte within it
};

// Sender: the IPC reference of [buf, buf+bytes) in the allocation info (the driver's fresh
// answer from sendProto, so a freed and reallocated allocation at the same address, which has a
// new buffer id, never reuses the old handle). Errors: the caller falls back to the pipeline.
Status ipcExport(const void* buf, size_t bytes, const PointerInfo& info, IpcRef* out);
// Sender: keeps ref in r->gpuOp until the rendezvous ends (the RTS may be retried).
Status ipcSendStart(core::Request* r, const IpcRef& ref);
const IpcRef* ipcSendRef(const core::Request* r);

// Receiver: keeps the reference of an unexpected IPC RTS in u->gpuOp until it is matched.
Status ipcHold(core::Request* u, const IpcRef& ref);
const IpcRef* ipcHeld(const core::Request* u);
// Receiver: maps the peer's allocation and starts copying len bytes into dst (host or device).
// An error leaves nothing behind (the caller falls back to the pipelined copy).
Status ipcRecvStart(core::Request* r, int peer, const IpcRef& ref, void* dst, size_t len);

// Pipelined send of the device buffer r->buf, len bytes, through host slots; transfer(arg, i,
// slot, offset, n) hands chunk i on (Pipeline's ToHost contract).
Status pipeSendStart(core::Request* r, size_t len, Pipeline::Transfer transfer, void* arg);
// Pipelined receive into the device buffer staged by stageRecv (r->gpuStage): chunk i is copied
// from the host staging buffer to the device once arrived(arg, offset + n) says its bytes are
// there. On success the protocol drops the staging without a final copy (dropStage).
Status pipeRecvStart(core::Request* r, size_t len, bool (*arrived)(void* arg, size_t upTo),
                     void* arg);

// Drives r's device operation: Ok (done), InProgress, or the error that stopped it.
Status rndvProgress(core::Request* r);
// Gives back r's device operation (mapping, events, slots); idempotent.
void rndvEnd(core::Request* r);
// Chunk of a pipelined transfer of len bytes (RRT_CUDA_CHUNK or auto), for tests.
size_t pipeChunk(size_t len);

// The peer is gone: close its mappings nobody holds.
void ipcPeerGone(int peer);
// gpu::shutdown: closes every mapping, frees the pools.
void rndvShutdown();
// Counters for tests and RRT_STATS.
struct IpcStats {
  uint64_t exports, driverExports, opens, closes;
  size_t openMappings;
};
IpcStats ipcStats();

}  // namespace rrt::gpu
