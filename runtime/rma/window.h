// One-sided communication: windows and the operations on them.
//
// Contract
//   A Window exposes memory of every rank of a communicator. It owns a private duplicate of
//   that communicator (so its own context id, agreed collectively at creation like any
//   communicator's); all of its traffic is ordinary point-to-point messages on that context,
//   so it gets eager / rendezvous, zero-copy CMA / RDMA and every transport from runtime/proto.
//   Barriers of fence and free run as collectives on the duplicate's collective context.
//
//   Target side (target.cc): every rank keeps kHeaderSlots receives posted for RmaHeaders from
//   any source. Their completion callbacks (run from inside the engine) only queue the slot;
//   the rma poller (registered with core::addPoller, so it runs from every progress()) services
//   queued headers in arrival order and re-posts the slot. Put data is received straight into
//   window memory; get data is sent straight from it. Accumulates are applied from a per-origin
//   queue in issue order, with the reduction kernels of runtime/coll.
//
//   Origin side (origin.cc): each operation is an internal request ("op") that completes when
//   all its parts (header / data sends, the answer's receive) have; the window counts ops in
//   flight per target, which is what flush waits for. Locks and PSCW are in sync.cc.
//
//   Direct path (direct.cc): at creation every rank registers its window memory with each
//   transport that has one-sided put / get and the ranks allgather base, size, disp_unit and the
//   packed remote keys (wire::RmaWinInfo). A contiguous put / get of at least RRT_RMA_DIRECT_MIN
//   bytes to a target whose transport can do it is then the transport's own put / get straight
//   into / out of the target's window memory (CMA, RDMA WRITE / READ, TCP PUT frames): no
//   header, no target-side handling. The op is the same internal request, counted in flight
//   until the transport's completion. Where put completion does not mean delivery (no
//   kPutDelivered: TCP), the target is marked unconfirmed and the next flush / fence sends it
//   a zero-byte put on the ordinary path: its acknowledgement travels behind the data (unlock
//   and complete need none: their Unlock / Complete message travels behind the data too). Everything
//   else (smaller ops, accumulates, dynamic windows, out-of-range accesses, transports without
//   put / get, a transport that declines the first chunk) takes the ordinary path.
//
//   Shared windows (shared.cc): the memory of every rank of one node is one segment that all of
//   them map, each rank's part back to back; otherwise they are ordinary windows over the part.
//
//   Ownership: windows live in a table by handle until free(). Threading: single-threaded, like
//   the rest of rrt.
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <vector>

#include <rrt/rrt.h>

#include "runtime/core/list.h"
#include "runtime/core/request.h"
#include "runtime/core/status.h"
#include "runtime/proto/comm.h"
#include "runtime/proto/wire.h"

namespace rrt::rma {

enum class Kind : uint8_t { Create, Allocate, Dynamic, Shared };

struct Window;

// A queue linked through T::nextReady: nothing allocated per element (a std::deque used as a
// queue allocates a node every 64 pushes).
template <typename T>
struct Fifo {
  T* head = nullptr;
  T* tail = nullptr;
  bool empty() const { return head == nullptr; }
  void push(T* t) {
    t->nextReady = nullptr;
    if (tail) tail->nextReady = t;
    else head = t;
    tail = t;
  }
  T* pop() {
    T* t = head;
    head = t->nextReady;
    if (!head) tail = nullptr;
    t->nextReady = nullptr;
    return t;
  }
  void clear() { head = tail = nullptr; }
};

// A posted receive for RmaHeaders (plus inline payload).
struct HeaderSlot {
  Window* win = nullptr;
  core::Request* req = nullptr;
  HeaderSlot* nextReady = nullptr;  // in Window::readySlots
  alignas(8) uint8_t buf[sizeof(proto::wire::RmaHeader) + proto::wire::kRmaInlineMax];
};

// An operation at the target that waits for its data (put / accumulate payload in a separate
// message), or an accumulate waiting for its turn in its origin's queue.
struct TargetOp {
  Window* win = nullptr;
  int src = 0;
  proto::wire::RmaHeader h{};
  char* addr = nullptr;       // target memory (nullptr: out of range)
  char* data = nullptr;       // the payload (owned when owned)
  bool owned = false;
  bool ready = false;         // payload arrived
  bool dropped = false;       // its data never came (window freed): neither applied nor answered
  Status status = Status::Ok;
  // While its data receive is posted: the request, and its links in Window::waiting.
  core::Request* req = nullptr;
  TargetOp* prevWaiting = nullptr;
  TargetOp* nextWaiting = nullptr;
  TargetOp* nextReady = nullptr;  // in Window::readyPuts
};

struct Region {
  uintptr_t addr;
  size_t len;
};

// A shared window's node-wide segment (shared.cc): every rank's part back to back in rank
// order, mapped by every rank of the window. Unmapped with the window.
struct SharedMapping {
  char* base = nullptr;
  size_t bytes = 0;
  std::vector<size_t> offs, sizes;  // per rank of the window
  std::vector<int> dispUnits;
  SharedMapping() = default;
  SharedMapping(const SharedMapping&) = delete;
  SharedMapping& operator=(const SharedMapping&) = delete;
  ~SharedMapping();
};

struct Window {
  rrt_win_t handle = RRT_WIN_NULL;
  proto::Comm* comm = nullptr;  // private duplicate
  Kind kind = Kind::Create;
  char* base = nullptr;
  size_t size = 0;
  int dispUnit = 1;
  std::unique_ptr<char[], void (*)(char*)> owned{nullptr, nullptr};  // Allocate's memory
  std::vector<Region> regions;  // Dynamic: attached memory
  SharedMapping shared;         // Shared: the node's segment

  // ---- origin side ----
  uint32_t nextId = 1;
  std::vector<uint32_t> inFlight;  // per target: ops not complete
  uint64_t inFlightTotal = 0;
  Status opError = Status::Ok;     // first failure of an op without a request since last sync
  std::vector<uint8_t> lockedNocheck;  // per target: locked with RRT_MODE_NOCHECK
  std::vector<uint8_t> locked;         // per target: holds a lock
  bool lockedAll = false;

  // ---- direct path (direct.cc) ----
  std::vector<proto::wire::RmaWinInfo> remote;  // per rank, allgathered at creation
  struct Reg {
    transport::Transport* tx;
    transport::MemHandle* mh;
  };
  std::vector<Reg> regs;                 // this rank's registrations of its window memory
  size_t directMin = SIZE_MAX;           // RRT_RMA_DIRECT_MIN
  std::vector<uint8_t> unconfirmed;      // per target: direct puts not yet proven delivered
  size_t unconfirmedCount = 0;
  // Direct ops that met NoResource after their first chunk: retried from the rma poller.
  core::List<core::Request, &core::Request::hook> directRetry;

  // ---- target side ----
  std::vector<std::unique_ptr<HeaderSlot>> slots;
  Fifo<HeaderSlot> readySlots;                // headers arrived, not yet serviced
  Fifo<TargetOp> readyPuts;                   // put data arrived: acknowledge
  std::vector<std::deque<TargetOp*>> accQueue;  // per origin: accumulates in issue order
  size_t accReady = 0;                        // accumulates whose data arrived
  uint64_t sendsInFlight = 0;                 // answers (acks, get data) not yet sent
  TargetOp* waiting = nullptr;                // ops whose data receive is posted (a list)
  // Locks held on this rank's window: one exclusive holder or any number of shared ones
  // (sharedBy: per origin, so that an origin can release only the locks it holds).
  int exclusiveHolder = -1;
  int sharedHolders = 0;
  std::vector<uint32_t> sharedBy;
  struct LockWaiter {
    int src;
    uint8_t type;
    uint32_t id;
  };
  std::deque<LockWaiter> lockQueue;

  // ---- generalized active target ----
  std::vector<uint32_t> postsFrom;      // Post messages received, per rank (origin role)
  std::vector<uint32_t> completesFrom;  // Complete messages received, per rank (target role)
  std::vector<int> accessGroup;         // start()ed targets
  std::vector<int> exposureGroup;       // post()ed origins
  bool accessOpen = false, exposureOpen = false;

  bool busy() const {
    return !readySlots.empty() || !readyPuts.empty() || accReady > 0 || !directRetry.empty();
  }
  // Nothing left that can move without more messages: no queued header or finished put, no
  // accumulate whose turn has come, no answer in flight. (An accumulate queued behind one that
  // waits for its data is not work: busy() stays true for it, so free() waits for quiet().)
  bool quiet() const {
    if (!readySlots.empty() || !readyPuts.empty() || sendsInFlight != 0) return false;
    if (accReady > 0)
      for (const auto& q : accQueue)
        if (!q.empty() && q.front()->ready) return false;
    return true;
  }
};

// ---- the window table and lifecycle (window.cc) ----------------------------------------------
Window* lookup(rrt_win_t handle);
const std::vector<Window*>& windows();  // by handle; nullptr where freed
// Collective over parent. base / size / dispUnit per kind (Allocate: base ignored, allocated).
Status create(proto::Comm& parent, Kind kind, void* base, size_t size, int dispUnit, Window** out);
// Collective over parent, whose ranks must all be on this node: one shared segment holds every
// rank's size bytes, back to back in rank order (shared.cc).
Status createShared(proto::Comm& parent, size_t size, int dispUnit, Window** out);
// A shared window's part of rank (RRT_PROC_NULL: the first rank with a non-empty part) as this
// process maps it.
Status sharedQuery(const Window& w, int rank, size_t* size, int* dispUnit, void** base);
Status attach(Window& w, void* base, size_t size);
Status detach(Window& w, const void* base);
Status free(Window* w);
Status barrier(Window& w);  // over the window's communicator
void finalizeAll();  // rrt_finalize: drops every window without communication

// Fire-and-forget sends on the window's context, counted in w.sendsInFlight until the
// transport is done with them. sendCopy copies data when it cannot go out at once (headers,
// acks); sendFrom sends from memory that stays valid (window memory, result buffers owned by
// the TargetOp freed afterwards when own is set).
Status sendCopy(Window& w, int dst, int tag, const void* data, size_t len);
Status sendFrom(Window& w, int dst, int tag, const void* buf, size_t len, char* own);

// ---- origin side (origin.cc) -----------------------------------------------------------------
// One operation. Buffers are bytes; for Acc / GetAcc / Cas, type is the predefined base type and
// bytes a multiple of its size. result: Get's destination, GetAcc / Cas's old contents. For Cas
// origin holds [compare, value]. request: when not nullptr, receives a request that completes
// with the op (the caller owns it); else the op's failure is kept for the next sync call.
struct OpArgs {
  proto::wire::RmaOp op = proto::wire::RmaOp::Put;
  const void* origin = nullptr;
  size_t originBytes = 0;   // payload sent (Cas: 2 elements)
  void* result = nullptr;
  size_t bytes = 0;         // target bytes accessed
  rrt_datatype_t type = RRT_BYTE;
  rrt_op_t rop = RRT_OP_NULL;
  int target = 0;
  uint64_t disp = 0;
};
Status issue(Window& w, const OpArgs& a, core::Request** request);
// An op is complete (all its parts, or its direct transfer): counts it out of flight, keeps a
// failure of an op without request for the next sync call, completes the request.
void opDone(core::Request* op);
// Sends a header-only control message (Lock / Unlock carry an answer; Post / Complete none).
// When answered, *ack is filled and *done set once the answer arrived.
Status control(Window& w, proto::wire::RmaOp op, int target, uint8_t lockType, bool answered,
               core::Request** answer, proto::wire::RmaAck* ack);

// ---- direct path (direct.cc) ----------------------------------------------------------------
// Collective over the window's communicator (it replaces creation's barrier: nobody returns
// before everyone has posted its header receives): registers this rank's memory, allgathers.
Status directSetup(Window& w);
// After the last barrier of free() (and at finalize): deregisters.
void directRelease(Window& w);
// Takes op a by the direct path when it qualifies: true when taken (*request set when asked);
// false: the caller uses the ordinary path.
bool directIssue(Window& w, const OpArgs& a, core::Request** request);
// The poller's part: retries ops waiting for transport resources.
int directProgress(Window& w);
// flush: proves delivery of the direct puts to target (-1: every target) that need it.
Status directConfirm(Window& w, int target);

// ---- target side (target.cc) -----------------------------------------------------------------
Status postSlots(Window& w);
void cancelSlots(Window& w);
// free(): operations still waiting for their data (an origin sent the header, never the data)
// are dropped: receives not yet matched are cancelled, matched ones waited for; none is applied
// or answered.
Status dropWaiting(Window& w);
// TargetOps from a free list (allocated only while it is empty).
TargetOp* targetOpAlloc();
void targetOpFree(TargetOp* t);
// The rma poller: services every window's queued work. Registered on the first window.
int poll(void*);
void ensurePoller();

// ---- synchronization (sync.cc) ---------------------------------------------------------------
// target -1: all. confirm false: the caller proves delivery of direct puts itself (a message
// whose answer the target sends only after reading what came before it: Unlock).
Status flush(Window& w, int target, bool confirm = true);
Status fence(Window& w);
Status lock(Window& w, int type, int target, int assertBits);
Status unlock(Window& w, int target);
Status lockAll(Window& w, int assertBits);
Status unlockAll(Window& w);
Status post(Window& w, const std::vector<int>& ranks, int assertBits);
Status start(Window& w, const std::vector<int>& ranks, int assertBits);
Status complete(Window& w);
Status wait(Window& w);
Status test(Window& w, bool* done);
// Takes the failure of completed ops since the last sync (and clears it).
Status takeError(Window& w);

}  // namespace rrt::rma
