// Reduce-scatter: binomial reduce to rank 0 (reduce_binomial.cc, rank order kept) followed by a
// linear scatterv from rank 0. A composite task: the reduce runs as a child task on the same
// tag, then this task sends the blocks.
// Cost: ceil(log2 p) (alpha + n beta + n gamma) + (p-1) alpha + n beta. Slower than the
// halving and ring algorithms but runs every op: the choice for non-commutative user ops.
#include <memory>

#include "runtime/coll/algorithms.h"

namespace rrt::coll {
namespace {

class ReduceScatterReduceScatterv final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), r = rank();
    const size_t ur = static_cast<size_t>(r);
    const size_t total = args_.recvOffs.back() + args_.recvBytes.back();
    for (;;) {
      switch (phase_) {
        case Phase::Start: {
          const void* in = inPlace(args_.sbuf) ? args_.rbuf : args_.sbuf;
          if (r == 0 && !(result_ = scratch(total))) return Status::ErrNoMemory;
          CollArgs a;
          a.kind = CollKind::Reduce;
          a.sbuf = in;
          a.rbuf = result_;
          a.count = total / args_.typeSize;
          a.typeSize = args_.typeSize;
          a.root = 0;
          a.reducer = args_.reducer;
          child_.reset(makeReduceBinomial(comm_, std::move(a)));
          child_->tag_ = tag_;
          child_->notify_ = this;
          phase_ = Phase::Reduce;
          break;
        }
        case Phase::Reduce: {
          const Status s = child_->advance();
          if (s == Status::InProgress) return s;
          if (s != Status::Ok) {
            if (child_->pending() > 0) return Status::InProgress;  // drain it first
            return s;
          }
          child_.reset();
          phase_ = Phase::Scatter;
          if (r == 0) {
            for (int i = 1; i < p; ++i) {
              const size_t u = static_cast<size_t>(i);
              RRT_TRY(send(i, result_ + args_.recvOffs[u], args_.recvBytes[u]));
            }
            copy(args_.rbuf, result_, args_.recvBytes[0]);
          } else {
            RRT_TRY(recv(0, args_.rbuf, args_.recvBytes[ur]));
          }
          break;
        }
        case Phase::Scatter:
          if (!idle()) return Status::InProgress;
          return error_;
      }
    }
  }

 private:
  enum class Phase { Start, Reduce, Scatter };
  Phase phase_ = Phase::Start;
  std::unique_ptr<Task> child_;
  char* result_ = nullptr;
};

}  // namespace

Task* makeReduceScatterReduceScatterv(proto::Comm& c, CollArgs&& a) {
  return new ReduceScatterReduceScatterv(c, std::move(a));
}

}  // namespace rrt::coll
