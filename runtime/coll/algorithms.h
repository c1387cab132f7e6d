// Factories of the algorithms, one per file (<collective>_<algorithm>.cc), and the direct forms
// (direct.h) of those that have one, next to their tasks. The registry with names, flags and
// costs is in selection.cc.
#pragma once

#include <vector>

#include "runtime/coll/direct.h"
#include "runtime/coll/task.h"

namespace rrt::coll {

#define RRT_COLL_ALGO(fn) Task* fn(proto::Comm& comm, CollArgs&& args)
RRT_COLL_ALGO(makeBarrierDissemination);
RRT_COLL_ALGO(makeBarrierLinear);
RRT_COLL_ALGO(makeBcastBinomial);
RRT_COLL_ALGO(makeBcastLinear);
RRT_COLL_ALGO(makeBcastScatterAllgather);
RRT_COLL_ALGO(makeBcastChain);
RRT_COLL_ALGO(makeBcastHierarchical);
RRT_COLL_ALGO(makeReduceBinomial);
RRT_COLL_ALGO(makeReduceLinear);
RRT_COLL_ALGO(makeReduceRabenseifner);
RRT_COLL_ALGO(makeAllreduceRecursiveDoubling);
RRT_COLL_ALGO(makeAllreduceRabenseifner);
RRT_COLL_ALGO(makeAllreduceRing);
RRT_COLL_ALGO(makeAllreduceHierarchical);
RRT_COLL_ALGO(makeAllgatherRecursiveDoubling);
RRT_COLL_ALGO(makeAllgatherBruck);
RRT_COLL_ALGO(makeAllgatherRing);
RRT_COLL_ALGO(makeAllgatherScattered);
RRT_COLL_ALGO(makeAlltoallBruck);
RRT_COLL_ALGO(makeAlltoallPairwise);
RRT_COLL_ALGO(makeAlltoallScattered);
RRT_COLL_ALGO(makeAlltoallvPairwise);
RRT_COLL_ALGO(makeAlltoallvScattered);
RRT_COLL_ALGO(makeGatherBinomial);
RRT_COLL_ALGO(makeGathervLinear);
RRT_COLL_ALGO(makeScatterBinomial);
RRT_COLL_ALGO(makeScattervLinear);
RRT_COLL_ALGO(makeReduceScatterRecursiveHalving);
RRT_COLL_ALGO(makeReduceScatterRing);
RRT_COLL_ALGO(makeReduceScatterReduceScatterv);
RRT_COLL_ALGO(makeScanRecursiveDoubling);
RRT_COLL_ALGO(makeExscanRecursiveDoubling);
#undef RRT_COLL_ALGO

#define RRT_COLL_DIRECT(fn) Status fn(Direct& d, const CollArgs& args)
RRT_COLL_DIRECT(barrierDisseminationDirect);
RRT_COLL_DIRECT(barrierLinearDirect);
RRT_COLL_DIRECT(barrierShmDirect);
RRT_COLL_DIRECT(bcastBinomialDirect);
RRT_COLL_DIRECT(bcastLinearDirect);
RRT_COLL_DIRECT(bcastShmDirect);
RRT_COLL_DIRECT(reduceBinomialDirect);
RRT_COLL_DIRECT(reduceLinearDirect);
RRT_COLL_DIRECT(reduceShmDirect);
RRT_COLL_DIRECT(reduceShmFlatDirect);
RRT_COLL_DIRECT(allreduceRecursiveDoublingDirect);
RRT_COLL_DIRECT(allreduceShmDirect);
RRT_COLL_DIRECT(allreduceShmFlatDirect);
RRT_COLL_DIRECT(allgatherRecursiveDoublingDirect);
RRT_COLL_DIRECT(allgatherBruckDirect);
RRT_COLL_DIRECT(allgatherRingDirect);
RRT_COLL_DIRECT(allgatherScatteredDirect);
RRT_COLL_DIRECT(allgatherShmDirect);
RRT_COLL_DIRECT(alltoallBruckDirect);
RRT_COLL_DIRECT(alltoallPairwiseDirect);
RRT_COLL_DIRECT(alltoallScatteredDirect);
RRT_COLL_DIRECT(alltoallShmDirect);
RRT_COLL_DIRECT(reduceScatterShmDirect);
RRT_COLL_DIRECT(alltoallvPairwiseDirect);
RRT_COLL_DIRECT(alltoallvScatteredDirect);
RRT_COLL_DIRECT(gatherBinomialDirect);
RRT_COLL_DIRECT(gathervLinearDirect);
RRT_COLL_DIRECT(scatterBinomialDirect);
RRT_COLL_DIRECT(scattervLinearDirect);
RRT_COLL_DIRECT(reduceScatterRecursiveHalvingDirect);
RRT_COLL_DIRECT(scanRecursiveDoublingDirect);
RRT_COLL_DIRECT(exscanRecursiveDoublingDirect);
#undef RRT_COLL_DIRECT

// What an alltoallv direct form sends from: the caller's buffer and send layout, or with
// RRT_IN_PLACE a scratch copy of rbuf in the receive layout. alltoallvStart (in
// alltoallv_pairwise.cc) sets it up and copies the rank's own block into place.
struct AlltoallvSource {
  const char* buf;
  const std::vector<size_t>* offs;
  const std::vector<size_t>* bytes;
  const char* block(size_t to) const { return buf + (*offs)[to]; }
  size_t blockBytes(size_t to) const { return (*bytes)[to]; }
};
Status alltoallvStart(Direct& d, const CollArgs& a, AlltoallvSource* src);

}  // namespace rrt::coll
