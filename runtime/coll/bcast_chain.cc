// Bcast: pipelined chain. Ranks relative to the root form a chain 0 -> 1 -> ... -> p-1; the
// buffer moves in segments of s bytes (RRT_COLL_SEGMENT) and each rank forwards a segment as
// soon as it has it, so all links carry data at once.
// Cost: (p - 2 + n/s) (alpha + s beta) ~ n beta for n >> p s: bandwidth-optimal for very large
// messages, where it beats scatter+allgather's 2 n beta. Any p.
#include <vector>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"
#include "runtime/coll/selection.h"

namespace rrt::coll {
namespace {

class BcastChain final : public Task {
 public:
  using Task::Task;
  Status advance() override {
    const int p = size(), rel = toRelative(rank(), args_.root, p);
    const size_t n = args_.count * args_.typeSize;
    char* buf = bytePtr(args_.rbuf);
    const int next = rel + 1 < p ? fromRelative(rel + 1, args_.root, p) : -1;
    const int prev = rel > 0 ? fromRelative(rel - 1, args_.root, p) : -1;
    for (;;) {
      switch (phase_) {
        case Phase::Start: {
          if (p == 1 || n == 0) return Status::Ok;
          seg_ = segmentBytes();
          nseg_ = (n + seg_ - 1) / seg_;
          if (prev < 0) {  // the root: everything can go at once
            for (size_t j = 0; j < nseg_; ++j) RRT_TRY(send(next, buf + j * seg_, segLen(n, j)));
            phase_ = Phase::Drain;
            break;
          }
          recvs_.assign(nseg_, nullptr);
          for (size_t j = 0; j < nseg_; ++j) RRT_TRY(recv(prev, buf + j * seg_, segLen(n, j), &recvs_[j]));
          phase_ = Phase::Stream;
          break;
        }
        case Phase::Stream:
          RRT_TRY(error_);
          // Forward segments in order as they arrive.
          while (fwd_ < nseg_ && done(recvs_[fwd_])) {
            if (next >= 0) RRT_TRY(send(next, buf + fwd_ * seg_, segLen(n, fwd_)));
            ++fwd_;
          }
          if (fwd_ < nseg_) return Status::InProgress;
          phase_ = Phase::Drain;
          break;
        case Phase::Drain:
          if (!idle()) return Status::InProgress;
          return error_;
      }
    }
  }

 private:
  size_t segLen(size_t n, size_t j) const { return j * seg_ + seg_ <= n ? seg_ : n - j * seg_; }
  enum class Phase { Start, Stream, Drain };
  Phase phase_ = Phase::Start;
  size_t seg_ = 0, nseg_ = 0, fwd_ = 0;
  std::vector<core::Request*> recvs_;
};

}  // namespace

Task* makeBcastChain(proto::Comm& c, CollArgs&& a) { return new BcastChain(c, std::move(a)); }

}  // namespace rrt::coll
