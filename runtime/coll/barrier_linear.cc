// Barrier: linear fan-in to rank 0, then linear fan-out from it.
// Cost: 2 alpha + 2 (p-1) o at rank 0 (o: the per-message overhead), depth 2. Every other rank
// sends one message and waits for one, so a rank waits on rank 0 alone: on an oversubscribed
// node that is the fewest context switches of any barrier here. Rank 0 leaves first, so in the
// pattern "barrier, then rank 0 sends" (a bcast or scatter from 0, OSU's timing loop) its data
// is on the way before the others are released. Wins at small p; any p.
#include "runtime/coll/algorithms.h"

namespace rrt::coll {
namespace {

class BarrierLinear final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      const int p = size(), me = rank();
      switch (phase_) {
        case Phase::In:
          phase_ = Phase::Out;
          if (p == 1) return Status::Ok;
          if (me == 0) {
            for (int r = 1; r < p; ++r) RRT_TRY(recv(r, nullptr, 0));
          } else {
            RRT_TRY(send(0, nullptr, 0));
            RRT_TRY(recv(0, nullptr, 0));
          }
          break;
        case Phase::Out:
          phase_ = Phase::Done;
          if (me == 0)
            for (int r = 1; r < p; ++r) RRT_TRY(send(r, nullptr, 0));
          break;
        case Phase::Done:
          return Status::Ok;
      }
    }
  }

 private:
  enum class Phase { In, Out, Done };
  Phase phase_ = Phase::In;
};

}  // namespace

Task* makeBarrierLinear(proto::Comm& c, CollArgs&& a) { return new BarrierLinear(c, std::move(a)); }

Status barrierLinearDirect(Direct& d, const CollArgs&) {
  const int p = d.size();
  if (d.rank() != 0) {
    RRT_TRY(d.send(0, nullptr, 0));
    RRT_TRY(d.recv(0, nullptr, 0));
    return d.wait();
  }
  for (int r = 1; r < p; ++r) RRT_TRY(d.recv(r, nullptr, 0));
  RRT_TRY(d.wait());
  for (int r = 1; r < p; ++r) RRT_TRY(d.send(r, nullptr, 0));
  return Status::Ok;
}

}  // namespace rrt::coll
