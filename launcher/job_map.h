// JobMap: which ranks run on which node, the data PMIx registration is built from.
//
// Today rrun only builds single-node maps (JobMap::singleNode). The registration code already
// describes every node of the map (node/proc regexes, per-node info), so a later --host/--hostfile
// or Slurm path only has to build a multi-node map and start one server per node, each with its
// own localNode. Ranks are numbered 0..size()-1 across the nodes in order.
#pragma once

#include <string>
#include <vector>

namespace rrt::launcher {

struct NodeRanks {
  std::string hostname;
  std::vector<int> ranks;  // global ranks on this node, ascending
};

class JobMap {
 public:
  static JobMap singleNode(const std::string& hostname, int nprocs);

  int size() const { return size_; }
  int numNodes() const { return static_cast<int>(nodes_.size()); }
  const std::vector<NodeRanks>& nodes() const { return nodes_; }
  int localNode() const { return localNode_; }
  const NodeRanks& local() const { return nodes_[localNode_]; }
  int nodeOf(int rank) const;
  int localRankOf(int rank) const;  // index of rank within its node

  // "host0,host1,..." and "0,1;2,3" (PMIx_generate_regex / PMIx_generate_ppn inputs).
  std::string hostList() const;
  std::string ppnList() const;
  // Comma-separated ranks of one node, e.g. "0,1,2".
  static std::string rankList(const NodeRanks& node);

 private:
  std::vector<NodeRanks> nodes_;
  int localNode_ = 0;
  int size_ = 0;
};

}  // namespace rrt::launcher
