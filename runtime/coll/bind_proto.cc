// Binds the collectives to the protocol layer. Its own file so that binaries which never call
// it (the collective unit tests, with their in-memory p2p) do not need the protocol layer.
#include "runtime/coll/coll.h"
#include "runtime/proto/p2p.h"

namespace rrt::coll {

void bindProtoP2p() {
  if (p2p().isend == &proto::isend) return;
  P2p p;
  p.isend = &proto::isend;
  p.irecv = &proto::irecv;
  setP2p(p);
}

}  // namespace rrt::coll
