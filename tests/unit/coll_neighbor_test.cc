// The neighbourhood exchange (runtime/coll/neighbor_exchange.cc) over the in-memory p2p: random
// neighbourhoods (repeated ranks, the rank itself, RRT_PROC_NULL, empty lists, zero-byte blocks)
// at 1..9 ranks, eager and rendezvous (which catches an exchange that completes only with
// buffering), two exchanges outstanding at once, and the one sequence number each consumes on
// every rank.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <vector>

#include "runtime/coll/neighbor_exchange.h"
#include "tests/unit/coll_sim.h"

namespace rrt::coll {
namespace {

using sim::Mode;
using sim::World;

// Each rank's destinations at random; its sources are every block sent to it, in a shuffled
// order (the k-th entry of a sender meets that sender's k-th block to it), plus PROC_NULLs.
struct Graph {
  std::vector<std::vector<int>> dests, sources;
};
Graph randomGraph(int p, std::mt19937& rng) {
  Graph g;
  g.dests.resize(static_cast<size_t>(p));
  g.sources.resize(static_cast<size_t>(p));
  for (int r = 0; r < p; ++r) {
    const int n = static_cast<int>(rng() % 6);  // 0..5, repeats likely at small p
    for (int i = 0; i < n; ++i) {
      const int d = static_cast<int>(rng() % static_cast<unsigned>(p + 1)) - 1;
      g.dests[r].push_back(d < 0 ? RRT_PROC_NULL : d);
      if (d >= 0) g.sources[d].push_back(r);
    }
  }
  for (int r = 0; r < p; ++r) {
    if (rng() % 3 == 0) g.sources[r].push_back(RRT_PROC_NULL);
    std::shuffle(g.sources[r].begin(), g.sources[r].end(), rng);
  }
  return g;
}

size_t blockBytes(int s, size_t b) { return static_cast<size_t>(s * 5 + static_cast<int>(b) * 3) % 7; }
char byteOf(int s, size_t b, size_t j) { return static_cast<char>(s * 31 + static_cast<int>(b) * 7 + static_cast<int>(j) + 1); }

// Buffers of one exchange on every rank, filled and checked.
struct Exchange {
  const Graph& g;
  std::vector<std::vector<char>> send, recv;
  std::vector<NeighborArgs> args;

  explicit Exchange(const Graph& graph) : g(graph) {
    const size_t p = g.dests.size();
    send.resize(p);
    recv.resize(p);
    args.resize(p);
    for (size_t r = 0; r < p; ++r) {
      NeighborArgs& a = args[r];
      a.dests = g.dests[r];
      a.sources = g.sources[r];
      for (size_t b = 0; b < a.dests.size(); ++b) {
        a.sendOffs.push_back(send[r].size() + 1);  // a gap before each block
        a.sendBytes.push_back(blockBytes(static_cast<int>(r), b));
        send[r].push_back(0);
        for (size_t j = 0; j < a.sendBytes[b]; ++j) send[r].push_back(byteOf(static_cast<int>(r), b, j));
      }
      a.recvBytes.resize(a.sources.size());
      a.recvOffs.resize(a.sources.size());
      size_t off = 1;
      for (size_t i = a.sources.size(); i-- > 0;) {  // slots laid out last first
        const int b = blockFor(static_cast<int>(r), i);
        a.recvBytes[i] = b < 0 ? 3 : blockBytes(a.sources[i], static_cast<size_t>(b));
        a.recvOffs[i] = off;
        off += a.recvBytes[i] + 1;
      }
      recv[r].assign(off, '#');
      a.sbuf = send[r].data();
      a.rbuf = recv[r].data();
    }
  }
  // The block of its sender that slot i of rank r receives (-1: PROC_NULL).
  int blockFor(int r, size_t i) const {
    const int s = g.sources[static_cast<size_t>(r)][i];
    if (s == RRT_PROC_NULL) return -1;
    int k = 0;
    for (size_t j = 0; j < i; ++j) k += g.sources[static_cast<size_t>(r)][j] == s;
    const std::vector<int>& d = g.dests[static_cast<size_t>(s)];
    for (size_t b = 0; b < d.size(); ++b)
      if (d[b] == r && k-- == 0) return static_cast<int>(b);
    return -2;
  }
  void start(World& w, std::vector<core::Request*>* reqs) {
    for (int r = 0; r < w.size(); ++r) {
      core::Request* q = nullptr;
      NeighborArgs a = args[static_cast<size_t>(r)];
      ASSERT_EQ(startNeighborExchange(w.comm(r), std::move(a), &q), Status::Ok);
      reqs->push_back(q);
    }
  }
  void check(const char* what) const {
    for (size_t r = 0; r < g.dests.size(); ++r) {
      const NeighborArgs& a = args[r];
      std::vector<char> want(recv[r].size(), '#');
      for (size_t i = 0; i < a.sources.size(); ++i) {
        const int b = blockFor(static_cast<int>(r), i);
        ASSERT_NE(b, -2) << what << ": the graph is inconsistent";
        if (b < 0) continue;
        for (size_t j = 0; j < a.recvBytes[i]; ++j)
          want[a.recvOffs[i] + j] = byteOf(a.sources[i], static_cast<size_t>(b), j);
      }
      EXPECT_EQ(recv[r], want) << what << ": rank " << r;
    }
  }
};

bool waitAndRelease(World& w, const std::vector<core::Request*>& reqs) {
  const bool ok = w.waitAll(reqs);
  for (core::Request* q : reqs) {
    if (ok) {
      EXPECT_EQ(q->status.error, RRT_SUCCESS);
    }
    if (q->complete) core::requestRelease(q);
  }
  EXPECT_EQ(w.unmatched(), 0u);
  return ok;
}

TEST(NeighborExchange, RandomNeighbourhoods) {
  std::mt19937 rng(7);
  for (int p = 1; p <= 9; ++p)
    for (Mode m : {Mode::Eager, Mode::Rendezvous})
      for (int round = 0; round < 8; ++round) {
        World w(p, m, static_cast<uint32_t>(p * 100 + round));
        const Graph g = randomGraph(p, rng);
        Exchange x(g);
        std::vector<core::Request*> reqs;
        x.start(w, &reqs);
        const std::string what = "p=" + std::to_string(p) + " round " + std::to_string(round) +
                                 (m == Mode::Eager ? " eager" : " rendezvous");
        ASSERT_TRUE(waitAndRelease(w, reqs)) << what << ": deadlock";
        x.check(what.c_str());
      }
}

TEST(NeighborExchange, TwoOutstandingAndSequence) {
  std::mt19937 rng(11);
  for (int p : {1, 2, 4, 7})
    for (Mode m : {Mode::Eager, Mode::Rendezvous}) {
      World w(p, m, static_cast<uint32_t>(p));
      const uint32_t seq0 = w.comm(0).collSeq;
      const Graph g1 = randomGraph(p, rng), g2 = randomGraph(p, rng);
      Exchange a(g1), b(g2);
      std::vector<core::Request*> reqs;
      a.start(w, &reqs);
      b.start(w, &reqs);
      ASSERT_TRUE(waitAndRelease(w, reqs)) << "p=" << p << ": deadlock";
      a.check("first");
      b.check("second");
      for (int r = 0; r < p; ++r) EXPECT_EQ(w.comm(r).collSeq, seq0 + 2) << "rank " << r;
    }
}

}  // namespace
}  // namespace rrt::coll
