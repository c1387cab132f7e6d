// Groups: ordered lists of world ranks. rrt has no group object, so group arithmetic is local
// (as MPI defines it: no communication); only MPI_Comm_create turns a group back into a
// communicator, through rrt_comm_split (comm.cc).
#include <algorithm>
#include <unordered_map>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

namespace rrt::mpi {
namespace {
Table<std::vector<int>>& groups() {
  static Table<std::vector<int>> t = [] {
    Table<std::vector<int>> tt;
    tt.add({});  // MPI_GROUP_EMPTY
    return tt;
  }();
  return t;
}
int myWorldRank() {
  int r = -1;
  rrt_comm_rank(RRT_COMM_WORLD, &r);
  return r;
}
bool contains(const std::vector<int>& g, int w) { return std::find(g.begin(), g.end(), w) != g.end(); }
}  // namespace

int groupMake(std::vector<int> worldRanks, MPI_Group* out) {
  *out = worldRanks.empty() ? MPI_GROUP_EMPTY : (kKindGroup | groups().add(std::move(worldRanks)));
  return MPI_SUCCESS;
}

const std::vector<int>* groupGet(MPI_Group handle) {
  return groups().get(handleIndex(handle, kKindGroup));
}

}  // namespace rrt::mpi

using namespace rrt::mpi;

#define GET_GROUP(var, handle)                                                  \
  const std::vector<int>* var = groupGet(handle);                               \
  if (var == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_GROUP, __func__)

extern "C" {

RRT_MPI_WEAK_ALIAS(MPI_Comm_group);
int PMPI_Comm_group(MPI_Comm comm, MPI_Group* group) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  return groupMake(commWorldRanks(*c), group);
}

RRT_MPI_WEAK_ALIAS(MPI_Group_size);
int PMPI_Group_size(MPI_Group group, int* size) {
  GET_GROUP(g, group);
  *size = static_cast<int>(g->size());
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Group_rank);
int PMPI_Group_rank(MPI_Group group, int* rank) {
  GET_GROUP(g, group);
  auto it = std::find(g->begin(), g->end(), myWorldRank());
  *rank = it == g->end() ? MPI_UNDEFINED : static_cast<int>(it - g->begin());
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Group_incl);
int PMPI_Group_incl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  GET_GROUP(g, group);
  if (n < 0 || n > static_cast<int>(g->size())) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  std::vector<int> out;
  std::vector<bool> seen(g->size(), false);
  for (int i = 0; i < n; ++i) {
    int r = ranks[i];
    if (r < 0 || r >= static_cast<int>(g->size()) || seen[r])
      return raise(MPI_COMM_WORLD, MPI_ERR_RANK, __func__);
    seen[r] = true;
    out.push_back((*g)[r]);
  }
  return groupMake(std::move(out), newgroup);
}

RRT_MPI_WEAK_ALIAS(MPI_Group_excl);
int PMPI_Group_excl(MPI_Group group, int n, const int ranks[], MPI_Group* newgroup) {
  GET_GROUP(g, group);
  if (n < 0 || n > static_cast<int>(g->size())) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  std::vector<bool> drop(g->size(), false);
  for (int i = 0; i < n; ++i) {
    int r = ranks[i];
    if (r < 0 || r >= static_cast<int>(g->size()) || drop[r])
      return raise(MPI_COMM_WORLD, MPI_ERR_RANK, __func__);
    drop[r] = true;
  }
  std::vector<int> out;
  for (size_t i = 0; i < g->size(); ++i)
    if (!drop[i]) out.push_back((*g)[i]);
  return groupMake(std::move(out), newgroup);
}

// Expands (first, last, stride) triplets into ranks; false if a triplet is invalid.
static bool expandRanges(int size, int n, int ranges[][3], std::vector<int>* out) {
  for (int i = 0; i < n; ++i) {
    int first = ranges[i][0], last = ranges[i][1], stride = ranges[i][2];
    if (stride == 0 || first < 0 || first >= size || last < 0 || last >= size) return false;
    if ((stride > 0 && first > last) || (stride < 0 && first < last)) return false;
    for (int r = first; stride > 0 ? r <= last : r >= last; r += stride) out->push_back(r);
  }
  return true;
}

RRT_MPI_WEAK_ALIAS(MPI_Group_range_incl);
int PMPI_Group_range_incl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  GET_GROUP(g, group);
  std::vector<int> ranks;
  if (n < 0 || !expandRanges(static_cast<int>(g->size()), n, ranges, &ranks))
    return raise(MPI_COMM_WORLD, MPI_ERR_RANK, __func__);
  return PMPI_Group_incl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

RRT_MPI_WEAK_ALIAS(MPI_Group_range_excl);
int PMPI_Group_range_excl(MPI_Group group, int n, int ranges[][3], MPI_Group* newgroup) {
  GET_GROUP(g, group);
  std::vector<int> ranks;
  if (n < 0 || !expandRanges(static_cast<int>(g->size()), n, ranges, &ranks))
    return raise(MPI_COMM_WORLD, MPI_ERR_RANK, __func__);
  return PMPI_Group_excl(group, static_cast<int>(ranks.size()), ranks.data(), newgroup);
}

RRT_MPI_WEAK_ALIAS(MPI_Group_translate_ranks);
int PMPI_Group_translate_ranks(MPI_Group group1, int n, const int ranks1[], MPI_Group group2,
                               int ranks2[]) {
  GET_GROUP(a, group1);
  GET_GROUP(b, group2);
  std::unordered_map<int, int> pos;
  for (size_t i = 0; i < b->size(); ++i) pos[(*b)[i]] = static_cast<int>(i);
  for (int i = 0; i < n; ++i) {
    int r = ranks1[i];
    if (r == MPI_PROC_NULL) {
      ranks2[i] = MPI_PROC_NULL;
      continue;
    }
    if (r < 0 || r >= static_cast<int>(a->size())) return raise(MPI_COMM_WORLD, MPI_ERR_RANK, __func__);
    auto it = pos.find((*a)[r]);
    ranks2[i] = it == pos.end() ? MPI_UNDEFINED : it->second;
  }
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Group_compare);
int PMPI_Group_compare(MPI_Group group1, MPI_Group group2, int* result) {
  GET_GROUP(a, group1);
  GET_GROUP(b, group2);
  if (*a == *b) {
    *result = MPI_IDENT;
    return MPI_SUCCESS;
  }
  std::vector<int> sa = *a, sb = *b;
  std::sort(sa.begin(), sa.end());
  std::sort(sb.begin(), sb.end());
  *result = sa == sb ? MPI_SIMILAR : MPI_UNEQUAL;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Group_union);
int PMPI_Group_union(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  GET_GROUP(a, group1);
  GET_GROUP(b, group2);
  std::vector<int> out = *a;
  for (int w : *b)
    if (!contains(*a, w)) out.push_back(w);
  return groupMake(std::move(out), newgroup);
}

RRT_MPI_WEAK_ALIAS(MPI_Group_intersection);
int PMPI_Group_intersection(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  GET_GROUP(a, group1);
  GET_GROUP(b, group2);
  std::vector<int> out;
  for (int w : *a)
    if (contains(*b, w)) out.push_back(w);
  return groupMake(std::move(out), newgroup);
}

RRT_MPI_WEAK_ALIAS(MPI_Group_difference);
int PMPI_Group_difference(MPI_Group group1, MPI_Group group2, MPI_Group* newgroup) {
  GET_GROUP(a, group1);
  GET_GROUP(b, group2);
  std::vector<int> out;
  for (int w : *a)
    if (!contains(*b, w)) out.push_back(w);
  return groupMake(std::move(out), newgroup);
}

RRT_MPI_WEAK_ALIAS(MPI_Group_free);
int PMPI_Group_free(MPI_Group* group) {
  if (group == nullptr) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  GET_GROUP(g, *group);
  (void)g;
  if (*group != MPI_GROUP_EMPTY) groups().remove(handleIndex(*group, kKindGroup));
  *group = MPI_GROUP_NULL;
  return MPI_SUCCESS;
}

}  // extern "C"
