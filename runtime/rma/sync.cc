// Synchronization of one-sided operations, as messages on the window's context:
//   flush      wait until every op of this rank to the target(s) is complete (acknowledged /
//              answered; direct ops: transferred, and delivery proven where the transport's
//              completion does not prove it); flush_local is the same here (an op's origin buffer is free once the
//              op is complete, and rrt never completes an op earlier)
//   fence      flush everything, then a barrier over the window's communicator: afterwards every
//              op issued anywhere before the fence is complete at its target
//   lock       a Lock request to the target, answered when its lock queue grants it;
//   unlock     flush, then an Unlock request, answered once released (so nothing of this
//              epoch is in flight when it returns); RRT_MODE_NOCHECK skips both messages
//   post/start/complete/wait  Post notices from the target to each origin of its group; start
//              waits for one from each target of its group; complete flushes and sends Complete
//              notices; wait (test) consumes one from each origin of the exposure group.
#include "runtime/core/progress.h"
#include "runtime/proto/p2p.h"
#include "runtime/rma/window.h"

namespace rrt::rma {
namespace {

using proto::wire::RmaAck;
using proto::wire::RmaOp;

bool validRank(const Window& w, int r) { return r >= 0 && r < w.comm->size; }

Status waitAnswer(core::Request* r, const RmaAck& ack) {
  RRT_TRY(proto::waitRelease(r, nullptr));
  return ack.status == RRT_SUCCESS ? Status::Ok : static_cast<Status>(ack.status);
}

}  // namespace

Status takeError(Window& w) {
  Status s = w.opError;
  w.opError = Status::Ok;
  return s;
}

Status flush(Window& w, int target, bool confirm) {
  if (target == RRT_PROC_NULL) return Status::Ok;
  // Twice when direct puts need their delivery proven (direct.cc): once for the ops, then for
  // the zero-byte puts that follow them.
  if (target >= 0) {
    if (!validRank(w, target)) return Status::ErrRank;
    const size_t t = static_cast<size_t>(target);
    RRT_TRY(core::waitFor([&w, t] { return w.inFlight[t] == 0; }));
    if (w.unconfirmedCount > 0 && w.unconfirmed[t]) {
      if (!confirm) {
        w.unconfirmed[t] = 0;
        --w.unconfirmedCount;
        return takeError(w);
      }
      RRT_TRY(directConfirm(w, target));
      RRT_TRY(core::waitFor([&w, t] { return w.inFlight[t] == 0; }));
    }
  } else {
    RRT_TRY(core::waitFor([&w] { return w.inFlightTotal == 0; }));
    if (w.unconfirmedCount > 0) {
      RRT_TRY(directConfirm(w, -1));
      RRT_TRY(core::waitFor([&w] { return w.inFlightTotal == 0; }));
    }
  }
  return takeError(w);
}

Status fence(Window& w) {
  if (w.accessOpen || w.exposureOpen || w.lockedAll) return Status::ErrRmaSync;
  Status st = flush(w, -1);
  Status b = barrier(w);
  return st != Status::Ok ? st : b;
}

Status lock(Window& w, int type, int target, int assertBits) {
  if (type != RRT_LOCK_SHARED && type != RRT_LOCK_EXCLUSIVE) return Status::ErrArg;
  if (target == RRT_PROC_NULL) return Status::Ok;
  if (!validRank(w, target)) return Status::ErrRank;
  const size_t t = static_cast<size_t>(target);
  if (w.locked[t] || w.lockedAll) return Status::ErrRmaSync;
  if (assertBits & RRT_MODE_NOCHECK) {
    w.locked[t] = 1;
    w.lockedNocheck[t] = 1;
    return Status::Ok;
  }
  RmaAck ack{};
  core::Request* r = nullptr;
  RRT_TRY(control(w, RmaOp::Lock, target, static_cast<uint8_t>(type), true, &r, &ack));
  RRT_TRY(waitAnswer(r, ack));
  w.locked[t] = 1;
  w.lockedNocheck[t] = 0;
  return Status::Ok;
}

Status unlock(Window& w, int target) {
  if (target == RRT_PROC_NULL) return Status::Ok;
  if (!validRank(w, target)) return Status::ErrRank;
  const size_t t = static_cast<size_t>(target);
  if (!w.locked[t] || w.lockedAll) return Status::ErrRmaSync;
  // The Unlock's answer leaves the target after everything before it on the ordered path was
  // read there: it proves the delivery of direct puts too (no zero-byte put needed).
  Status st = flush(w, target, w.lockedNocheck[t] != 0);
  w.locked[t] = 0;
  if (w.lockedNocheck[t]) return st;
  RmaAck ack{};
  core::Request* r = nullptr;
  RRT_TRY(control(w, RmaOp::Unlock, target, 0, true, &r, &ack));
  Status u = waitAnswer(r, ack);
  return st != Status::Ok ? st : u;
}

Status lockAll(Window& w, int assertBits) {
  if (w.lockedAll) return Status::ErrRmaSync;
  for (uint8_t l : w.locked)
    if (l) return Status::ErrRmaSync;
  const int n = w.comm->size;
  if (!(assertBits & RRT_MODE_NOCHECK)) {
    // Every request first, then the answers: the grants come in parallel.
    std::vector<RmaAck> acks(static_cast<size_t>(n));
    std::vector<core::Request*> reqs(static_cast<size_t>(n), nullptr);
    Status st = Status::Ok;
    for (int r = 0; r < n && st == Status::Ok; ++r)
      st = control(w, RmaOp::Lock, r, RRT_LOCK_SHARED, true, &reqs[static_cast<size_t>(r)],
                   &acks[static_cast<size_t>(r)]);
    for (int r = 0; r < n; ++r)
      if (reqs[static_cast<size_t>(r)]) {
        Status s = waitAnswer(reqs[static_cast<size_t>(r)], acks[static_cast<size_t>(r)]);
        if (st == Status::Ok) st = s;
      }
    RRT_TRY(st);
  }
  for (int r = 0; r < n; ++r) {
    w.locked[static_cast<size_t>(r)] = 1;
    w.lockedNocheck[static_cast<size_t>(r)] = (assertBits & RRT_MODE_NOCHECK) ? 1 : 0;
  }
  w.lockedAll = true;
  return Status::Ok;
}

Status unlockAll(Window& w) {
  if (!w.lockedAll) return Status::ErrRmaSync;
  const int n = w.comm->size;
  Status st = Status::Ok;
  for (int r = 0; r < n; ++r) {  // as in unlock: the Unlock answers prove delivery
    Status s = flush(w, r, w.lockedNocheck[static_cast<size_t>(r)] != 0);
    if (st == Status::Ok) st = s;
  }
  std::vector<RmaAck> acks(static_cast<size_t>(n));
  std::vector<core::Request*> reqs(static_cast<size_t>(n), nullptr);
  for (int r = 0; r < n; ++r) {
    const size_t t = static_cast<size_t>(r);
    w.locked[t] = 0;
    if (w.lockedNocheck[t]) continue;
    Status s = control(w, RmaOp::Unlock, r, 0, true, &reqs[t], &acks[t]);
    if (st == Status::Ok) st = s;
  }
  for (int r = 0; r < n; ++r)
    if (reqs[static_cast<size_t>(r)]) {
      Status s = waitAnswer(reqs[static_cast<size_t>(r)], acks[static_cast<size_t>(r)]);
      if (st == Status::Ok) st = s;
    }
  w.lockedAll = false;
  return st;
}

Status post(Window& w, const std::vector<int>& ranks, int assertBits) {
  if (w.exposureOpen) return Status::ErrRmaSync;
  for (int r : ranks)
    if (!validRank(w, r)) return Status::ErrRank;
  if (!(assertBits & RRT_MODE_NOCHECK))
    for (int r : ranks) RRT_TRY(control(w, RmaOp::Post, r, 0, false, nullptr, nullptr));
  w.exposureGroup = ranks;
  w.exposureOpen = true;
  return Status::Ok;
}

Status start(Window& w, const std::vector<int>& ranks, int assertBits) {
  if (w.accessOpen) return Status::ErrRmaSync;
  for (int r : ranks)
    if (!validRank(w, r)) return Status::ErrRank;
  if (!(assertBits & RRT_MODE_NOCHECK))
    for (int r : ranks) {
      const size_t t = static_cast<size_t>(r);
      RRT_TRY(core::waitFor([&w, t] { return w.postsFrom[t] > 0; }));
      --w.postsFrom[t];
    }
  w.accessGroup = ranks;
  w.accessOpen = true;
  return Status::Ok;
}

Status complete(Window& w) {
  if (!w.accessOpen) return Status::ErrRmaSync;
  Status st = Status::Ok;
  for (int r : w.accessGroup) {
    // The target's wait() returns on the Complete notice, which it reads after the data of
    // direct puts before it: no zero-byte put needed.
    Status s = flush(w, r, false);
    if (st == Status::Ok) st = s;
  }
  for (int r : w.accessGroup) {
    Status s = control(w, RmaOp::Complete, r, 0, false, nullptr, nullptr);
    if (st == Status::Ok) st = s;
  }
  w.accessGroup.clear();
  w.accessOpen = false;
  return st;
}

Status test(Window& w, bool* done) {
  if (!w.exposureOpen) return Status::ErrRmaSync;
  *done = false;
  (void)core::progress();
  for (int r : w.exposureGroup)
    if (w.completesFrom[static_cast<size_t>(r)] == 0) return Status::Ok;
  for (int r : w.exposureGroup) --w.completesFrom[static_cast<size_t>(r)];
  w.exposureGroup.clear();
  w.exposureOpen = false;
  *done = true;
  return Status::Ok;
}

Status wait(Window& w) {
  if (!w.exposureOpen) return Status::ErrRmaSync;
  for (int r : w.exposureGroup) {
    const size_t t = static_cast<size_t>(r);
    RRT_TRY(core::waitFor([&w, t] { return w.completesFrom[t] > 0; }));
  }
  for (int r : w.exposureGroup) --w.completesFrom[static_cast<size_t>(r)];
  w.exposureGroup.clear();
  w.exposureOpen = false;
  return Status::Ok;
}

}  // namespace rrt::rma
