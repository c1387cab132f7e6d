#include "runtime/coll/node_layout.h"

#include <unordered_map>

namespace rrt::coll {

NodeLayout nodeLayout(const std::vector<uint32_t>& nodeIds, int rank) {
  NodeLayout l;
  const int p = static_cast<int>(nodeIds.size());
  std::unordered_map<uint32_t, int> index;  // node id -> node index
  l.nodeOf.resize(nodeIds.size());
  for (int r = 0; r < p; ++r) {  // ascending ranks: a node's first rank seen is its leader
    auto it = index.emplace(nodeIds[static_cast<size_t>(r)], static_cast<int>(l.leaders.size()));
    if (it.second) l.leaders.push_back(r);
    l.nodeOf[static_cast<size_t>(r)] = it.first->second;
  }
  const int mine = l.nodeOf[static_cast<size_t>(rank)];
  l.local = ranksOfNode(l, mine);
  for (size_t i = 0; i < l.local.size(); ++i)
    if (l.local[i] == rank) l.localIndex = static_cast<int>(i);
  if (l.leaders[static_cast<size_t>(mine)] == rank) l.leaderIndex = mine;
  return l;
}

std::vector<int> ranksOfNode(const NodeLayout& l, int nodeIndex) {
  std::vector<int> out;
  for (size_t r = 0; r < l.nodeOf.size(); ++r)
    if (l.nodeOf[r] == nodeIndex) out.push_back(static_cast<int>(r));
  return out;
}

bool worthHierarchy(const std::vector<uint32_t>& nodeIds) {
  if (nodeIds.size() < 3) return false;
  std::unordered_map<uint32_t, int> count;
  for (uint32_t n : nodeIds) ++count[n];
  return count.size() > 1 && count.size() < nodeIds.size();
}

}  // namespace rrt::coll
