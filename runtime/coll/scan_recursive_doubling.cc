// Scan (inclusive prefix): recursive doubling. At distance d = 1, 2, 4, ... rank r exchanges its
// partial (the reduction of its aligned group of d ranks) with r ^ d; a lower partner's partial
// joins both the partial and the result, a higher one's joins the partial only.
// Cost: ceil(log2 p) (alpha + n beta + 2 n gamma). Any p (partners past the end sit the step
// out). Keeps rank order: non-commutative ops are fine. exscan_recursive_doubling.cc runs the
// same rounds with the own input left out of the result.
#include <utility>

#include "runtime/coll/algorithms.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {

namespace {

class ScanRecursiveDoubling final : public Task {
 public:
  ScanRecursiveDoubling(proto::Comm& c, CollArgs&& a, bool exclusive)
      : Task(c, std::move(a)), exclusive_(exclusive) {}
  Status advance() override {
    const int p = size(), r = rank();
    const size_t bytes = args_.count * args_.typeSize;
    for (;;) {
      if (!idle()) return Status::InProgress;
      RRT_TRY(error_);
      if (mask_ == 0) {  // start
        const void* in = inPlace(args_.sbuf) ? args_.rbuf : args_.sbuf;
        if (bytes == 0) return Status::Ok;
        if (!(partial_ = scratch(bytes)) || !(tmp_ = scratch(bytes))) return Status::ErrNoMemory;
        copy(partial_, in, bytes);
        if (!exclusive_) {
          copy(args_.rbuf, in, bytes);
          haveResult_ = true;
        }
        mask_ = 1;
      } else {
        const int peer = r ^ mask_;
        if (peer < p) {
          if (peer < r) {
            reduce(tmp_, partial_, args_.count);  // partial = lower op partial
            if (haveResult_) {
              reduce(tmp_, args_.rbuf, args_.count);
            } else {
              copy(args_.rbuf, tmp_, bytes);
              haveResult_ = true;
            }
          } else if (args_.reducer.commutative) {
            reduce(tmp_, partial_, args_.count);
          } else {
            reduce(partial_, tmp_, args_.count);  // tmp = partial op higher
            std::swap(partial_, tmp_);
          }
        }
        mask_ <<= 1;
      }
      if (mask_ >= p) return Status::Ok;
      const int peer = r ^ mask_;
      if (peer < p) {
        RRT_TRY(recv(peer, tmp_, bytes));
        RRT_TRY(send(peer, partial_, bytes));
      }
    }
  }

 private:
  bool exclusive_;
  bool haveResult_ = false;
  char* partial_ = nullptr;
  char* tmp_ = nullptr;
  int mask_ = 0;
};

}  // namespace

Task* makeScanRecursiveDoubling(proto::Comm& c, CollArgs&& a) {
  return new ScanRecursiveDoubling(c, std::move(a), false);
}
Task* makeScanTask(proto::Comm& c, CollArgs&& a, bool exclusive) {
  return new ScanRecursiveDoubling(c, std::move(a), exclusive);
}

// The task's rounds in a row; its comments hold here too.
Status scanDirect(Direct& d, const CollArgs& a, bool exclusive) {
  const int p = d.size(), r = d.rank();
  const size_t bytes = a.count * a.typeSize;
  const void* in = inPlace(a.sbuf) ? a.rbuf : a.sbuf;
  if (bytes == 0) return Status::Ok;
  char* partial = d.scratch(bytes);
  char* tmp = d.scratch(bytes);
  if (!partial || !tmp) return Status::ErrNoMemory;
  Direct::copy(partial, in, bytes);
  bool haveResult = !exclusive;
  if (haveResult) Direct::copy(a.rbuf, in, bytes);
  for (int mask = 1; mask < p; mask <<= 1) {
    const int peer = r ^ mask;
    if (peer >= p) continue;
    RRT_TRY(d.recv(peer, tmp, bytes));
    RRT_TRY(d.send(peer, partial, bytes));
    RRT_TRY(d.wait());
    if (peer < r) {
      a.reducer.apply(tmp, partial, a.count);
      if (haveResult) {
        a.reducer.apply(tmp, a.rbuf, a.count);
      } else {
        Direct::copy(a.rbuf, tmp, bytes);
        haveResult = true;
      }
    } else if (a.reducer.commutative) {
      a.reducer.apply(tmp, partial, a.count);
    } else {
      a.reducer.apply(partial, tmp, a.count);
      std::swap(partial, tmp);
    }
  }
  return Status::Ok;
}

Status scanRecursiveDoublingDirect(Direct& d, const CollArgs& a) { return scanDirect(d, a, false); }

}  // namespace rrt::coll
