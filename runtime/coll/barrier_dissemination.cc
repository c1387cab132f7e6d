// Barrier: dissemination (Hensgen, Finkel, Manber).
// Cost: ceil(log2 p) alpha. Every rank sends and receives one empty message per round, at
// distances 1, 2, 4, ...: after round k every rank has heard (transitively) from 2^(k+1) ranks.
// Wins at every size and rank count here (no data); any p, no folding needed.
#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

class BarrierDissemination final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      if (dist_ >= size()) return Status::Ok;
      RRT_TRY(recv(disseminationFrom(rank(), dist_, size()), nullptr, 0));
      RRT_TRY(send(disseminationTo(rank(), dist_, size()), nullptr, 0));
      dist_ <<= 1;
    }
  }

 private:
  int dist_ = 1;  // the saved step: distance of the next round
};

}  // namespace

Task* makeBarrierDissemination(proto::Comm& c, CollArgs&& a) {
  return new BarrierDissemination(c, std::move(a));
}

Status barrierDisseminationDirect(Direct& d, const CollArgs&) {
  const int p = d.size(), me = d.rank();
  for (int dist = 1; dist < p; dist <<= 1) {
    RRT_TRY(d.recv(disseminationFrom(me, dist, p), nullptr, 0));
    RRT_TRY(d.send(disseminationTo(me, dist, p), nullptr, 0));
    RRT_TRY(d.wait());
  }
  return Status::Ok;
}

}  // namespace rrt::coll
