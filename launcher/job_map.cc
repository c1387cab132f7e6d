#include "launcher/job_map.h"

namespace rrt::launcher {

JobMap JobMap::singleNode(const std::string& hostname, int nprocs) {
  JobMap map;
  NodeRanks node;
  node.hostname = hostname;
  for (int r = 0; r < nprocs; ++r) node.ranks.push_back(r);
  map.nodes_.push_back(std::move(node));
  map.size_ = nprocs;
  return map;
}

int JobMap::nodeOf(int rank) const {
  for (int n = 0; n < numNodes(); ++n) {
    for (int r : nodes_[n].ranks) {
      if (r == rank) return n;
    }
  }
  return -1;
}

int JobMap::localRankOf(int rank) const {
  for (const auto& node : nodes_) {
    for (std::size_t i = 0; i < node.ranks.size(); ++i) {
      if (node.ranks[i] == rank) return static_cast<int>(i);
    }
  }
  return -1;
}

std::string JobMap::rankList(const NodeRanks& node) {
  std::string out;
  for (int r : node.ranks) {
    if (!out.empty()) out += ',';
    out += std::to_string(r);
  }
  return out;
}

std::string JobMap::hostList() const {
  std::string out;
  for (const auto& node : nodes_) {
    if (!out.empty()) out += ',';
    out += node.hostname;
  }
  return out;
}

std::string JobMap::ppnList() const {
  std::string out;
  for (const auto& node : nodes_) {
    if (!out.empty()) out += ';';
    out += rankList(node);
  }
  return out;
}

}  // namespace rrt::launcher
