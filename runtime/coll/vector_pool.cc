#include "runtime/coll/vector_pool.h"

#include "runtime/coll/coll.h"

namespace rrt::coll {
namespace {
SizesPool gSizes;
RequestListPool gRequestLists;
}  // namespace

SizesPool& sizesPool() { return gSizes; }
RequestListPool& requestListPool() { return gRequestLists; }

CollArgs::~CollArgs() {
  gSizes.give(sendBytes);
  gSizes.give(sendOffs);
  gSizes.give(recvBytes);
  gSizes.give(recvOffs);
}

}  // namespace rrt::coll
