// Exscan (exclusive prefix): recursive doubling, the rounds of scan_recursive_doubling.cc with
// the rank's own input kept out of the result (the result starts empty and takes the first
// lower partial as is). Rank 0's receive buffer is left untouched, as MPI says.
// Cost: ceil(log2 p) (alpha + n beta + 2 n gamma). Any p; keeps rank order.
#include "runtime/coll/algorithms.h"

namespace rrt::coll {

Task* makeScanTask(proto::Comm& c, CollArgs&& a, bool exclusive);
Status scanDirect(Direct& d, const CollArgs& a, bool exclusive);

Task* makeExscanRecursiveDoubling(proto::Comm& c, CollArgs&& a) {
  return makeScanTask(c, std::move(a), true);
}

Status exscanRecursiveDoublingDirect(Direct& d, const CollArgs& a) { return scanDirect(d, a, true); }

}  // namespace rrt::coll
