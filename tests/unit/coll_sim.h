// An in-memory p2p for the collective unit tests: many ranks inside one process and one thread.
// Each simulated rank has its own proto::Comm; isend/irecv match on (context, source, tag) in
// posting order like the real protocol (non-overtaking), and completions are delivered from a
// progress poller in a shuffled order, so algorithms are exercised against late and reordered
// completions. Modes: eager (a send completes once its data is copied, before any match) and
// rendezvous (a send completes only when matched) - the latter catches algorithms that would
// deadlock without buffering.
#pragma once

#include <memory>
#include <vector>

#include "runtime/coll/coll.h"

namespace rrt::coll::sim {

enum class Mode { Eager, Rendezvous };

class World {
 public:
  // ranks simulated processes; comm i has rank i of size ranks, context ctx.
  World(int ranks, Mode mode, uint32_t seed = 1);
  ~World();
  proto::Comm& comm(int r) { return *comms_[static_cast<size_t>(r)]; }
  int size() const { return static_cast<int>(comms_.size()); }
  // Splits into communicators of the ranks with equal color (key = rank), context ctx.
  std::vector<std::unique_ptr<proto::Comm>> split(const std::vector<int>& color, uint32_t ctx);
  // Places rank r on node nodes[r] (default: all on node 0), for the node-aware algorithms.
  void setNodes(const std::vector<uint32_t>& nodes);
  // Progresses until every request is complete; false after too many idle rounds (deadlock).
  bool waitAll(const std::vector<core::Request*>& reqs);
  size_t unmatched() const;

 private:
  std::vector<std::unique_ptr<proto::Comm>> comms_;
};

}  // namespace rrt::coll::sim
