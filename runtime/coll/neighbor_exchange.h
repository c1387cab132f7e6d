// Neighbourhood exchange: each rank sends its own blocks to a list of destinations and receives
// blocks from a list of sources (rrt_neighbor_alltoallv; MPI's neighbourhood collectives). See
// neighbor_exchange.cc.
#pragma once

#include <vector>

#include "runtime/coll/coll.h"

namespace rrt::coll {

// Per-neighbour blocks in bytes; sources / dests are ranks of comm or RRT_PROC_NULL (no
// message, the slot stays as it is), duplicates allowed. Checked by the caller.
struct NeighborArgs {
  const void* sbuf = nullptr;
  void* rbuf = nullptr;
  std::vector<int> sources, dests;
  std::vector<size_t> sendBytes, sendOffs, recvBytes, recvOffs;
};

// A collective of comm (one sequence number on every rank, with or without neighbours): *out
// completes once every block is sent and received.
Status startNeighborExchange(proto::Comm& comm, NeighborArgs&& args, core::Request** out);

}  // namespace rrt::coll
