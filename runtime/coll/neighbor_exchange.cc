// Neighbourhood exchange: every receive and every send posted at once, then one wait.
// Cost: one round, alpha + (the larger of the bytes a rank sends and receives) beta, all of its
// messages in flight together. The neighbourhood is the program's (a stencil, a graph), so there
// is no algorithm to choose: each block goes straight to its neighbour, none is forwarded.
// Matching: all messages carry the collective's tag on the collective context, and the
// protocol keeps each pair's messages in order, so with a rank listed several times the k-th
// block sent to it meets its k-th receive from this rank (lists in the caller's order).
#include "runtime/coll/neighbor_exchange.h"

#include <new>

#include "runtime/coll/task.h"
#include "runtime/core/log.h"

namespace rrt::coll {
namespace {

class NeighborExchange final : public Task {
 public:
  NeighborExchange(proto::Comm& comm, NeighborArgs&& a)
      : Task(comm, CollArgs{}), n_(std::move(a)) {}

  Status advance() override {
    if (!posted_) {
      posted_ = true;
      // Receives first: a block from a neighbour that is already sending finds its buffer.
      for (size_t i = 0; i < n_.sources.size(); ++i)
        if (n_.sources[i] != RRT_PROC_NULL)
          RRT_TRY(recv(n_.sources[i], bytePtr(n_.rbuf) + n_.recvOffs[i], n_.recvBytes[i]));
      for (size_t i = 0; i < n_.dests.size(); ++i)
        if (n_.dests[i] != RRT_PROC_NULL)
          RRT_TRY(send(n_.dests[i], bytePtr(n_.sbuf) + n_.sendOffs[i], n_.sendBytes[i]));
    }
    if (!idle()) return Status::InProgress;
    return error_;
  }

 private:
  NeighborArgs n_;
  bool posted_ = false;
};

}  // namespace

Status startNeighborExchange(proto::Comm& comm, NeighborArgs&& args, core::Request** out) {
  Task* t = nullptr;
  try {
    t = new NeighborExchange(comm, std::move(args));
  } catch (const std::bad_alloc&) {
    return Status::ErrNoMemory;
  }
  const uint32_t seq = comm.collSeq++;
  RRT_TRACE("coll: neighbor exchange seq %u on comm %d", seq, comm.handle);
  launch(comm, t, collTag(seq), out);
  return Status::Ok;
}

}  // namespace rrt::coll
