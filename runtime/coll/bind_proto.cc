// Binds the collectives to the protocol layer. Its own file so that binaries which never call
// it (the collective unit tests, with their in-memory p2p) do not need the protocol layer.
#include "runtime/coll/coll.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"

namespace rrt::coll {

void bindProtoP2p() {
  if (p2p().isend == &proto::isend) return;
  P2p p;
  p.isend = &proto::isend;
  p.irecv = &proto::irecv;
  p.nodeOf = [](int w) -> uint32_t {
    const auto& nodes = proto::engine().job().nodeOf;
    return static_cast<size_t>(w) < nodes.size() ? nodes[static_cast<size_t>(w)] : 0;
  };
  setP2p(p);
}

}  // namespace rrt::coll
