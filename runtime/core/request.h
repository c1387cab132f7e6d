// Requests: the state of one non-blocking operation, handed to the C API as rrt_request_t.
//
// Requests come from a pool (RequestPool): the send/receive fast path takes one from a free
// list and gives it back, never calling malloc once the pool is warm. A request is owned by
// rrt from creation to release; the user's handle is valid until wait/test report completion
// or request_free hands it back.
//
// Layout: the fields the matching engine reads first share the first cache line.
#pragma once

#include <new>

#include <cstddef>
#include <cstdint>

#include <rrt/rrt.h>

#include "runtime/core/list.h"
#include "runtime/core/status.h"
#include "runtime/transport/transport.h"

namespace rrt::proto {
struct Comm;
}

namespace rrt::core {

enum class ReqKind : uint8_t { Free = 0, Send, Recv, Coll };

// Flags for sends.
enum SendFlags : uint8_t {
  kSendSync = 1u << 0,      // ssend: complete only once matched
  kMatchedProbe = 1u << 1,  // an unexpected message taken out of matching by rrt_improbe
};

constexpr uint32_t kRequestMagic = 0x72727471;  // "rrtq"

}  // namespace rrt::core

struct rrt_request_s {
  // --- matching (first cache line) ---
  rrt::core::ListHook hook;      // posted / unexpected / pending queue link
  uint32_t magic = 0;
  rrt::core::ReqKind kind = rrt::core::ReqKind::Free;
  uint8_t flags = 0;             // SendFlags
  uint8_t phase = 0;             // protocol state (proto::RndvPhase etc.)
  volatile bool complete = false;
  bool userFreed = false;        // request_free: release on completion
  bool internal = false;         // made by rrt itself (collectives): never a user handle
  bool commHeld = false;         // keeps comm alive until released (proto::commHold)
  uint32_t ctx = 0;              // context id of the communicator (p2p or collective)
  int32_t tag = 0;               // tag (receive: may be RRT_ANY_TAG)
  int32_t srcRank = 0;           // receive: source comm rank or RRT_ANY_SOURCE
  int32_t peer = -1;             // world rank of the peer (send: destination)
  uint64_t postOrder = 0;        // receive: posting order (wildcard vs. specific ordering)

  // --- buffer ---
  void* buf = nullptr;           // user buffer
  size_t bytes = 0;              // send: length; receive: capacity
  rrt::memory::MemType memType = rrt::memory::MemType::Host;
  rrt::proto::Comm* comm = nullptr;

  // --- outcome ---
  rrt_status_t status{};         // source / tag / error / cancelled / bytes

  // --- protocol state ---
  uint64_t id = 0;               // this request's wire id (proto::RequestIds), 0 if none
  uint64_t remoteId = 0;         // the peer's request id (rendezvous, synchronous send)
  size_t offset = 0;             // bytes moved so far (pipelined / fragmented paths)
  size_t remaining = 0;          // bytes still expected (receive) / unacknowledged (send)
  uint64_t remoteAddr = 0;       // rendezvous: the peer's buffer
  uint8_t rkey[rrt::transport::kMaxRkeyBytes];
  uint8_t rkeyLen = 0;
  uint8_t rndvMode = 0;          // proto::wire::RndvMode of a rendezvous
  rrt::transport::MemHandle* memHandle = nullptr;  // registration of buf, if any
  rrt::transport::Completion completion;           // for get/put
  uint32_t seq = 0;              // message sequence number (per peer)
  int outstanding = 0;           // get/put fragments in flight

  // --- completion callback for internal users (collectives) ---
  void (*onComplete)(rrt_request_s* req, void* arg) = nullptr;
  void* onCompleteArg = nullptr;
  void* collTask = nullptr;      // ReqKind::Coll: the collective's task
  void* gpuStage = nullptr;      // host staging of a device buffer (runtime/gpu, runtime/coll)
  void* gpuOp = nullptr;         // device rendezvous in progress: IPC or pipeline (gpu/rndv.h)
};

namespace rrt::core {

using Request = ::rrt_request_s;

namespace detail {
// Free requests, most recently released first (cache-warm). Slabs are never given back.
extern List<Request, &Request::hook> gFreeRequests;
void growRequests();  // adds a slab to gFreeRequests
// Drops r's hold on r->comm (set by the protocol layer: a freed communicator is deleted when
// its last request is released).
extern void (*gCommRelease)(Request* r);
}  // namespace detail

// Returns a request from the free list (allocating a new slab when empty; never on the fast
// path once warm), reset to its member defaults (default-init, not value-init: the rkey bytes
// stay as they are instead of being zeroed on every message), magic set. Inline: one pop and
// the stores of the defaults.
inline Request* requestAlloc(ReqKind kind) {
  if (__builtin_expect(detail::gFreeRequests.empty(), 0)) detail::growRequests();
  Request* r = detail::gFreeRequests.popFront();
  new (r) Request;
  r->magic = kRequestMagic;
  r->kind = kind;
  return r;
}
// Returns a request to the free list. Only for completed (or never-started) requests.
inline void requestRelease(Request* r) {
  if (r->commHeld) {
    r->commHeld = false;
    detail::gCommRelease(r);
  }
  r->magic = 0;
  r->kind = ReqKind::Free;
  detail::gFreeRequests.pushFront(r);
}
// True when r looks like a live request handed out by requestAlloc.
inline bool requestValid(const Request* r) { return r && r->magic == kRequestMagic; }

// Marks r complete with status s (stored in r->status.error). Runs onComplete; releases the
// request if the user already freed it. Inline: every receive ends here.
inline void requestComplete(Request* r, Status s) {
  if (failed(s) && r->status.error == RRT_SUCCESS) r->status.error = static_cast<int>(s);
  r->complete = true;
  if (r->onComplete) r->onComplete(r, r->onCompleteArg);
  if (r->userFreed) requestRelease(r);
}

}  // namespace rrt::core
