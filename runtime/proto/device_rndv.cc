// The protocol side of rendezvous with GPU buffers (the device side is runtime/gpu/rndv.h):
//   - Ipc: the receiver's copy from the sender's CUDA IPC mapping, then FIN; on any failure a
//     CTS of mode Copy instead (the sender then pipelines).
//   - Pipelined send: after the CTS, Data fragments fed from a pipeline of device->host chunk
//     copies (copy of chunk i+1 overlaps the sending of chunk i).
//   - Pipelined receive into device memory: Data fragments land in the host staging buffer and
//     each whole chunk is copied on to the device while the next ones arrive.
// Requests with device work in flight sit on gpuActive_ and are polled from Engine::poll; a
// driver error ends the request with it (and tells the peer), never a hang.
#include <algorithm>

#include "runtime/core/log.h"
#include "runtime/gpu/gpu.h"
#include "runtime/gpu/rndv.h"
#include "runtime/proto/engine.h"

namespace rrt::proto {

using core::Request;

void Engine::gpuWatch(Request* r) {
  if (std::find(gpuActive_.begin(), gpuActive_.end(), r) == gpuActive_.end())
    gpuActive_.push_back(r);
}

void Engine::gpuUnwatch(Request* r) {
  auto it = std::find(gpuActive_.begin(), gpuActive_.end(), r);
  if (it != gpuActive_.end()) gpuActive_.erase(it);
}

int Engine::progressGpu() {
  int events = 0;
  for (size_t i = 0; i < gpuActive_.size();) {
    Request* r = gpuActive_[i];
    stepGpu(r);  // may finish r (and others: the self transport delivers in the call)
    if (i < gpuActive_.size() && gpuActive_[i] == r) {
      ++i;
    } else {
      ++events;
    }
  }
  return events;
}

// Sender: hands chunk `index` (at `slot`, bytes [offset, offset+n) of the message) on as Data
// fragments; r->offset counts the bytes sent, so a NoResource resumes where it stopped.
Status Engine::pipeTransfer(void* arg, size_t, void* slot, size_t offset, size_t n) {
  Request* r = static_cast<Request*>(arg);
  Engine& e = engine();
  Peer& p = e.peers_[static_cast<size_t>(r->peer)];
  if (p.failed || !p.tx) return Status::ErrProcFailed;
  while (r->offset < offset + n) {
    const size_t done = r->offset - offset;
    const size_t chunk = std::min(n - done, p.proto.amPayload);
    wire::DataHeader d{r->remoteId, r->offset};
    Status st = p.tx->amSend(r->peer, wire::kData, &d, sizeof d, static_cast<char*>(slot) + done,
                             chunk);
    if (st != Status::Ok) return st;
    r->offset += chunk;
  }
  return Status::Ok;
}

bool Engine::pipeArrived(void* arg, size_t upTo) {
  return static_cast<Request*>(arg)->offset >= upTo;
}

// Receiver, Copy mode into a staged device buffer: the pipeline copies chunks to the device as
// they arrive. When it cannot start, the staging's one copy at the end does the job.
void Engine::startPipeRecv(Request* r) {
  if (!gpu::stagedUser(r) || r->remaining <= gpu::bounceLimit()) return;
  if (gpu::pipeRecvStart(r, r->remaining, &Engine::pipeArrived, r) == Status::Ok) gpuWatch(r);
}

void Engine::stepGpu(Request* r) {
  const int w = r->peer;
  Status st = gpu::rndvProgress(r);
  if (st == Status::InProgress) return;
  const auto phase = static_cast<Phase>(r->phase);
  if (r->kind == core::ReqKind::Send) {
    // A pipelined send: done, or failed (the receiver waits for Data: a FIN tells it).
    if (st != Status::Ok) {
      RRT_WARN("pipelined send of device memory to rank %d failed: %s", w, statusName(st));
      wire::FinHeader f{r->remoteId, static_cast<int32_t>(st), 0};
      sendCtl(w, wire::kFin, &f, sizeof f);
    }
    finishSend(r, st);
    return;
  }
  if (phase == Phase::IpcCopy) {
    if (st == Status::Ok) {
      wire::FinHeader f{r->remoteId, 0, 0};
      sendCtl(w, wire::kFin, &f, sizeof f);
      finishRecv(r, Status::Ok);
      return;
    }
    // The copy failed: the data comes by the pipelined copy instead (the sender still waits).
    RRT_INFO("CUDA IPC copy from rank %d failed (%s): pipelined copy instead", w, statusName(st));
    gpuUnwatch(r);
    gpu::rndvEnd(r);
    if (r->id) {
      ids_.remove(r->id);
      r->id = 0;
    }
    wire::RtsHeader rts{};
    rts.sreq = r->remoteId;
    rts.size = r->remaining;
    rts.mode = static_cast<uint8_t>(wire::RndvMode::Copy);
    startRndvRecv(r, rts, nullptr);
    return;
  }
  if (phase == Phase::RecvData) {
    // Every chunk is on the device (Ok) or a copy failed (the fragments still coming are
    // dropped: the request id is gone).
    finishRecv(r, st);
    return;
  }
  RRT_ERROR("internal: device rendezvous in phase %d", r->phase);
  finishRecv(r, Status::ErrInternal);
}

}  // namespace rrt::proto
