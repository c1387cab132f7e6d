// Binds the collectives to the protocol layer. Its own file so that binaries which never call
// it (the collective unit tests, with their in-memory p2p) do not need the protocol layer.
#include <cstring>

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
  // Same node and the shm transport up: the engine then reaches w through it, and /dev/shm
  // is common to both.
  p.sharesMemory = [](int w) {
    const proto::Engine& e = proto::engine();
    const auto& nodes = e.job().nodeOf;
    const size_t me = static_cast<size_t>(e.rank()), them = static_cast<size_t>(w);
    if (them >= nodes.size() || me >= nodes.size() || nodes[them] != nodes[me]) return false;
    for (const auto& t : e.transports())
      if (std::strcmp(t->name(), "shm") == 0) return true;
    return false;
  };
  p.localSingleCopyFrom = [] { return proto::engine().singleCopyFrom("shm"); };
  p.jobId = [] { return proto::engine().job().jobId.c_str(); };
  p.peerFailed = [](int w) { proto::engine().failPeer(w, Status::ErrProcFailed); };
  setP2p(p);
}

}  // namespace rrt::coll
