// Where the ranks of a communicator live, for the node-aware (hierarchical) algorithms: pure
// arithmetic over the node id of every rank, unit-tested on its own (coll_patterns_test.cc).
//
// A node's leader is its lowest rank; nodes are numbered in the order of their leaders, so every
// rank computes the same numbering from the same node ids.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace rrt::coll {

struct NodeLayout {
  std::vector<int> local;    // ranks on this rank's node, ascending (local[0] is its leader)
  std::vector<int> leaders;  // leader of every node, ascending
  std::vector<int> nodeOf;   // node index (into leaders) of every rank
  int localIndex = 0;        // this rank's index in local
  int leaderIndex = -1;      // this rank's index in leaders, -1 when it is not a leader
};

// The layout seen by rank, given the node id of every rank (any 32-bit ids).
NodeLayout nodeLayout(const std::vector<uint32_t>& nodeIds, int rank);

// True when the ranks span several nodes and at least one node holds several of them: the case
// where a node-aware algorithm has something to gain over a flat one.
bool worthHierarchy(const std::vector<uint32_t>& nodeIds);

// The ranks of nodeIndex's node, ascending.
std::vector<int> ranksOfNode(const NodeLayout& l, int nodeIndex);

}  // namespace rrt::coll
