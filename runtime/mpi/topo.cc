// Process topologies: Cartesian grids and distributed graphs. rrt has none of its own; a
// topology is a communicator (an rrt dup or split, never reordered) plus the description kept
// here, from which the query calls compute their answers locally.
#include <algorithm>
#include <functional>

#include "runtime/mpi/pmpi.h"
#include "runtime/mpi/state.h"

using namespace rrt::mpi;

namespace {

int topoErr(MPI_Comm comm, const char* fn) { return raise(comm, MPI_ERR_TOPOLOGY, fn); }

Comm* cartOf(MPI_Comm comm, const char* fn, int* err) {
  Comm* c = commCheck(comm, fn, err);
  if (c && c->topo.kind != MPI_CART) {
    *err = topoErr(comm, fn);
    return nullptr;
  }
  return c;
}

void coordsOf(const Topo& t, int rank, int* coords) {
  for (int d = static_cast<int>(t.dims.size()) - 1; d >= 0; --d) {
    coords[d] = rank % t.dims[d];
    rank /= t.dims[d];
  }
}

}  // namespace

extern "C" {

int rrt_mpi_unweighted_[1], rrt_mpi_weights_empty_[1];

RRT_MPI_WEAK_ALIAS(MPI_Dims_create);
int PMPI_Dims_create(int nnodes, int ndims, int dims[]) {
  if (nnodes <= 0 || ndims < 0) return raise(MPI_COMM_WORLD, MPI_ERR_ARG, __func__);
  int fixedProd = 1;
  std::vector<int> freeIdx;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] < 0) return raise(MPI_COMM_WORLD, MPI_ERR_DIMS, __func__);
    if (dims[d] == 0) freeIdx.push_back(d);
    else fixedProd *= dims[d];
  }
  if (nnodes % fixedProd != 0) return raise(MPI_COMM_WORLD, MPI_ERR_DIMS, __func__);
  int left = nnodes / fixedProd;
  if (freeIdx.empty()) return left == 1 ? MPI_SUCCESS : raise(MPI_COMM_WORLD, MPI_ERR_DIMS, __func__);
  // The most balanced split of left into k factors (smallest largest-minus-smallest), found by
  // a search over non-increasing sequences of left's divisors (MPI 3.1 section 7.5.2); the
  // answers agree with MPICH's table of 75,000 cases (its test topo/dims5).
  const int k = static_cast<int>(freeIdx.size());
  std::vector<int> divs;  // ascending
  for (int f = 1; static_cast<long>(f) * f <= left; ++f)
    if (left % f == 0) {
      divs.push_back(f);
      if (f != left / f) divs.push_back(left / f);
    }
  std::sort(divs.begin(), divs.end());
  std::vector<int> val(static_cast<size_t>(k), 1), cur(static_cast<size_t>(k), 1);
  long bestSpread = -1;
  std::function<void(int, int, int)> search = [&](int d, int rest, int maxF) {
    if (d == k - 1) {
      if (rest > maxF) return;
      cur[d] = rest;
      long spread = static_cast<long>(cur[0]) - rest;
      // ties: the larger smallest factor, then the larger next one up
      if (bestSpread < 0 || spread < bestSpread ||
          (spread == bestSpread &&
           std::lexicographical_compare(val.rbegin(), val.rend(), cur.rbegin(), cur.rend()))) {
        bestSpread = spread;
        val = cur;
      }
      return;
    }
    auto it = std::upper_bound(divs.begin(), divs.end(), std::min(maxF, rest));
    while (it != divs.begin()) {
      const int f = *--it;
      if (rest % f) continue;
      long p = 1;  // f^(k-d) >= rest, else the sequence cannot stay non-increasing
      for (int i = d; i < k && p < rest; ++i) p *= f;
      if (p < rest) break;
      // the spread is at least cur[0] - f, and only grows for smaller f
      if (d > 0 && bestSpread >= 0 && static_cast<long>(cur[0]) - f > bestSpread) break;
      cur[d] = f;
      search(d + 1, rest / f, f);
    }
  };
  search(0, left, left);
  for (size_t i = 0; i < freeIdx.size(); ++i) dims[freeIdx[i]] = val[i];
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Cart_create);
int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm* comm_cart) {
  int err;
  Comm* c = commCheck(comm_old, __func__, &err);
  if (!c) return err;
  if (ndims < 0) return raise(comm_old, MPI_ERR_DIMS, __func__);
  long n = 1;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] <= 0) return raise(comm_old, MPI_ERR_DIMS, __func__);
    n *= dims[d];
  }
  if (n > c->size) return raise(comm_old, MPI_ERR_DIMS, __func__);
  (void)reorder;  // ranks keep their order: allowed, and what users usually expect
  if (int e = PMPI_Comm_split(comm_old, c->rank < n ? 0 : MPI_UNDEFINED, c->rank, comm_cart))
    return e;
  if (*comm_cart == MPI_COMM_NULL) return MPI_SUCCESS;
  Comm* nc = commGet(*comm_cart);
  nc->topo.kind = MPI_CART;
  nc->topo.dims.assign(dims, dims + ndims);
  nc->topo.periods.resize(static_cast<size_t>(ndims));
  for (int d = 0; d < ndims; ++d) nc->topo.periods[d] = periods[d] != 0;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Cartdim_get);
int PMPI_Cartdim_get(MPI_Comm comm, int* ndims) {
  int err;
  Comm* c = cartOf(comm, __func__, &err);
  if (!c) return err;
  *ndims = static_cast<int>(c->topo.dims.size());
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Cart_get);
int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[]) {
  int err;
  Comm* c = cartOf(comm, __func__, &err);
  if (!c) return err;
  int nd = static_cast<int>(c->topo.dims.size());
  if (maxdims < nd) return raise(comm, MPI_ERR_ARG, __func__);
  std::vector<int> co(static_cast<size_t>(nd) + 1);
  coordsOf(c->topo, c->rank, co.data());
  for (int d = 0; d < nd; ++d) {
    dims[d] = c->topo.dims[d];
    periods[d] = c->topo.periods[d];
    coords[d] = co[d];
  }
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Cart_coords);
int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[]) {
  int err;
  Comm* c = cartOf(comm, __func__, &err);
  if (!c) return err;
  if (rank < 0 || rank >= c->size) return raise(comm, MPI_ERR_RANK, __func__);
  if (maxdims < static_cast<int>(c->topo.dims.size())) return raise(comm, MPI_ERR_ARG, __func__);
  coordsOf(c->topo, rank, coords);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Cart_rank);
int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int* rank) {
  int err;
  Comm* c = cartOf(comm, __func__, &err);
  if (!c) return err;
  int r = 0;
  for (size_t d = 0; d < c->topo.dims.size(); ++d) {
    int n = c->topo.dims[d], x = coords[d];
    if (c->topo.periods[d]) x = ((x % n) + n) % n;
    else if (x < 0 || x >= n) return raise(comm, MPI_ERR_ARG, __func__);
    r = r * n + x;
  }
  *rank = r;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Cart_shift);
int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int* rank_source, int* rank_dest) {
  int err;
  Comm* c = cartOf(comm, __func__, &err);
  if (!c) return err;
  int nd = static_cast<int>(c->topo.dims.size());
  if (direction < 0 || direction >= nd) return raise(comm, MPI_ERR_ARG, __func__);
  std::vector<int> co(static_cast<size_t>(nd));
  coordsOf(c->topo, c->rank, co.data());
  auto neighbour = [&](int delta) {
    std::vector<int> x = co;
    int n = c->topo.dims[direction];
    x[direction] += delta;
    if (!c->topo.periods[direction] && (x[direction] < 0 || x[direction] >= n)) return MPI_PROC_NULL;
    int r;
    PMPI_Cart_rank(comm, x.data(), &r);
    return r;
  };
  *rank_dest = neighbour(disp);
  *rank_source = neighbour(-disp);
  return MPI_SUCCESS;
}

// Ranks that agree on the dropped coordinates form one sub-grid; order within it is row-major.
RRT_MPI_WEAK_ALIAS(MPI_Cart_sub);
int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm* newcomm) {
  int err;
  Comm* c = cartOf(comm, __func__, &err);
  if (!c) return err;
  Topo t = c->topo;
  int nd = static_cast<int>(t.dims.size());
  std::vector<int> co(static_cast<size_t>(nd) + 1);
  coordsOf(t, c->rank, co.data());
  int color = 0, key = 0;
  Topo sub;
  sub.kind = MPI_CART;
  for (int d = 0; d < nd; ++d) {
    if (remain_dims[d]) {
      key = key * t.dims[d] + co[d];
      sub.dims.push_back(t.dims[d]);
      sub.periods.push_back(t.periods[d]);
    } else {
      color = color * t.dims[d] + co[d];
    }
  }
  if (int e = PMPI_Comm_split(comm, color, key, newcomm)) return e;
  commGet(*newcomm)->topo = sub;
  return MPI_SUCCESS;
}

// Ranks past nnodes get MPI_COMM_NULL, as for MPI_Cart_create; ranks keep their order.
RRT_MPI_WEAK_ALIAS(MPI_Graph_create);
int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm* comm_graph) {
  int err;
  Comm* c = commCheck(comm_old, __func__, &err);
  if (!c) return err;
  if (c->inter) return raise(comm_old, MPI_ERR_COMM, __func__);
  if (nnodes < 0 || nnodes > c->size) return raise(comm_old, MPI_ERR_ARG, __func__);
  if (nnodes > 0 && (index == nullptr || index[0] < 0)) return raise(comm_old, MPI_ERR_ARG, __func__);
  for (int i = 1; i < nnodes; ++i)
    if (index[i] < index[i - 1]) return raise(comm_old, MPI_ERR_ARG, __func__);
  const int nedges = nnodes > 0 ? index[nnodes - 1] : 0;
  if (nedges > 0 && edges == nullptr) return raise(comm_old, MPI_ERR_ARG, __func__);
  for (int e = 0; e < nedges; ++e)
    if (edges[e] < 0 || edges[e] >= nnodes) return raise(comm_old, MPI_ERR_RANK, __func__);
  (void)reorder;
  if (int e = PMPI_Comm_split(comm_old, c->rank < nnodes ? 0 : MPI_UNDEFINED, c->rank, comm_graph))
    return e;
  if (*comm_graph == MPI_COMM_NULL) return MPI_SUCCESS;
  Topo& t = commGet(*comm_graph)->topo;
  t.kind = MPI_GRAPH;
  t.index.assign(index, index + nnodes);
  t.edges.assign(edges, edges + nedges);
  return MPI_SUCCESS;
}

namespace {
Comm* graphOf(MPI_Comm comm, const char* fn, int* err) {
  Comm* c = commCheck(comm, fn, err);
  if (c && c->topo.kind != MPI_GRAPH) {
    *err = topoErr(comm, fn);
    return nullptr;
  }
  return c;
}
}  // namespace

RRT_MPI_WEAK_ALIAS(MPI_Graphdims_get);
int PMPI_Graphdims_get(MPI_Comm comm, int* nnodes, int* nedges) {
  int err;
  Comm* c = graphOf(comm, __func__, &err);
  if (!c) return err;
  *nnodes = static_cast<int>(c->topo.index.size());
  *nedges = static_cast<int>(c->topo.edges.size());
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Graph_get);
int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[]) {
  int err;
  Comm* c = graphOf(comm, __func__, &err);
  if (!c) return err;
  const Topo& t = c->topo;
  for (int i = 0; i < maxindex && i < static_cast<int>(t.index.size()); ++i) index[i] = t.index[i];
  for (int i = 0; i < maxedges && i < static_cast<int>(t.edges.size()); ++i) edges[i] = t.edges[i];
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Graph_neighbors_count);
int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int* nneighbors) {
  int err;
  Comm* c = graphOf(comm, __func__, &err);
  if (!c) return err;
  const Topo& t = c->topo;
  if (rank < 0 || rank >= static_cast<int>(t.index.size())) return raise(comm, MPI_ERR_RANK, __func__);
  *nneighbors = t.index[rank] - (rank > 0 ? t.index[rank - 1] : 0);
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Graph_neighbors);
int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[]) {
  int err;
  Comm* c = graphOf(comm, __func__, &err);
  if (!c) return err;
  const Topo& t = c->topo;
  if (rank < 0 || rank >= static_cast<int>(t.index.size())) return raise(comm, MPI_ERR_RANK, __func__);
  const int first = rank > 0 ? t.index[rank - 1] : 0;
  for (int i = 0; i < maxneighbors && first + i < t.index[rank]; ++i) neighbors[i] = t.edges[first + i];
  return MPI_SUCCESS;
}

// The rank MPI_Graph_create / MPI_Cart_create would give the caller (rrt never reorders).
RRT_MPI_WEAK_ALIAS(MPI_Graph_map);
int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int* newrank) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  (void)index;
  (void)edges;
  if (nnodes < 1 || nnodes > c->size) return raise(comm, MPI_ERR_ARG, __func__);
  *newrank = c->rank < nnodes ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Cart_map);
int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int* newrank) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  (void)periods;
  long n = 1;
  for (int d = 0; d < ndims; ++d) {
    if (dims[d] <= 0) return raise(comm, MPI_ERR_DIMS, __func__);
    n *= dims[d];
  }
  if (ndims < 0 || n > c->size) return raise(comm, MPI_ERR_DIMS, __func__);
  *newrank = c->rank < n ? c->rank : MPI_UNDEFINED;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Topo_test);
int PMPI_Topo_test(MPI_Comm comm, int* status) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  *status = c->topo.kind;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Dist_graph_create_adjacent);
int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int sourceweights[], int outdegree,
                                    const int destinations[], const int destweights[],
                                    MPI_Info info, int reorder, MPI_Comm* comm_dist_graph) {
  int err;
  Comm* c = commCheck(comm_old, __func__, &err);
  if (!c) return err;
  if (indegree < 0 || outdegree < 0) return raise(comm_old, MPI_ERR_ARG, __func__);
  for (int i = 0; i < indegree; ++i)
    if (sources[i] < 0 || sources[i] >= c->size) return raise(comm_old, MPI_ERR_RANK, __func__);
  for (int i = 0; i < outdegree; ++i)
    if (destinations[i] < 0 || destinations[i] >= c->size) return raise(comm_old, MPI_ERR_RANK, __func__);
  (void)info;
  (void)reorder;
  rrt_comm_t rc;
  if (int e = check(comm_old, rrt_comm_dup(c->rc, &rc), __func__)) return e;
  commWrap(rc, *commGet(comm_old), comm_dist_graph);
  Topo& t = commGet(*comm_dist_graph)->topo;
  t.kind = MPI_DIST_GRAPH;
  t.sources.assign(sources, sources + indegree);
  t.dests.assign(destinations, destinations + outdegree);
  t.weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
  if (t.weighted) {
    if (indegree > 0) t.sourceWeights.assign(sourceweights, sourceweights + indegree);
    if (outdegree > 0) t.destWeights.assign(destweights, destweights + outdegree);
  }
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Dist_graph_neighbors_count);
int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int* indegree, int* outdegree, int* weighted) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  if (c->topo.kind != MPI_DIST_GRAPH) return topoErr(comm, __func__);
  *indegree = static_cast<int>(c->topo.sources.size());
  *outdegree = static_cast<int>(c->topo.dests.size());
  *weighted = c->topo.weighted;
  return MPI_SUCCESS;
}

RRT_MPI_WEAK_ALIAS(MPI_Dist_graph_neighbors);
int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int sourceweights[],
                              int maxoutdegree, int destinations[], int destweights[]) {
  int err;
  Comm* c = commCheck(comm, __func__, &err);
  if (!c) return err;
  const Topo& t = c->topo;
  if (t.kind != MPI_DIST_GRAPH) return topoErr(comm, __func__);
  int in = std::min(maxindegree, static_cast<int>(t.sources.size()));
  int out = std::min(maxoutdegree, static_cast<int>(t.dests.size()));
  for (int i = 0; i < in; ++i) {
    sources[i] = t.sources[i];
    if (t.weighted && sourceweights != MPI_UNWEIGHTED) sourceweights[i] = t.sourceWeights[i];
  }
  for (int i = 0; i < out; ++i) {
    destinations[i] = t.dests[i];
    if (t.weighted && destweights != MPI_UNWEIGHTED) destweights[i] = t.destWeights[i];
  }
  return MPI_SUCCESS;
}

}  // extern "C"
