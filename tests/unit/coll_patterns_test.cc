// Peer arithmetic (patterns.h): checked against brute-force properties.
#include <gtest/gtest.h>

#include <set>
#include <vector>

#include "runtime/coll/node_layout.h"
#include "runtime/coll/patterns.h"

namespace rrt::coll {
namespace {

TEST(CollPatterns, Powers) {
  EXPECT_EQ(floorPow2(1), 1);
  EXPECT_EQ(floorPow2(7), 4);
  EXPECT_EQ(floorPow2(8), 8);
  EXPECT_EQ(ceilLog2(1), 0);
  EXPECT_EQ(ceilLog2(5), 3);
  EXPECT_EQ(ceilLog2(16), 4);
  EXPECT_TRUE(isPow2(16));
  EXPECT_FALSE(isPow2(12));
}

TEST(CollPatterns, BinomialTreeCoversEveryRankOnce) {
  for (int p = 1; p <= 33; ++p) {
    std::vector<int> parentOf(static_cast<size_t>(p), -2);
    for (int rel = 0; rel < p; ++rel) {
      int ch[32];
      const int n = binomialChildren(rel, p, ch);
      int covered = 1;
      for (int i = 0; i < n; ++i) {
        EXPECT_EQ(binomialParent(ch[i]), rel);
        EXPECT_EQ(parentOf[static_cast<size_t>(ch[i])], -2);
        parentOf[static_cast<size_t>(ch[i])] = rel;
        if (i > 0) EXPECT_GT(ch[i], ch[i - 1]);
        // The subtree of a child starts where the previous ones end: contiguous ranges.
        EXPECT_EQ(ch[i], rel + covered);
        covered += binomialSubtreeSize(ch[i], p);
      }
      EXPECT_EQ(covered, binomialSubtreeSize(rel, p)) << "p=" << p << " rel=" << rel;
    }
    EXPECT_EQ(binomialParent(0), -1);
    EXPECT_EQ(binomialSubtreeSize(0, p), p);
    for (int rel = 1; rel < p; ++rel) EXPECT_EQ(parentOf[static_cast<size_t>(rel)], binomialParent(rel));
  }
  EXPECT_EQ(binomialParent(6), 4);
  EXPECT_EQ(binomialParent(5), 4);
  EXPECT_EQ(binomialSubtreeSize(4, 7), 3);
}

TEST(CollPatterns, RelativeRanksAndRing) {
  for (int p = 1; p <= 9; ++p)
    for (int root = 0; root < p; ++root)
      for (int r = 0; r < p; ++r) EXPECT_EQ(fromRelative(toRelative(r, root, p), root, p), r);
  EXPECT_EQ(ringLeft(0, 5), 4);
  EXPECT_EQ(ringRight(4, 5), 0);
  EXPECT_EQ(mod(-7, 5), 3);
}

TEST(CollPatterns, DisseminationAndPairwiseArePermutations) {
  for (int p = 2; p <= 17; ++p) {
    for (int d = 1; d < p; d <<= 1) {
      std::set<int> to;
      for (int r = 0; r < p; ++r) {
        to.insert(disseminationTo(r, d, p));
        EXPECT_EQ(disseminationFrom(disseminationTo(r, d, p), d, p), r);
        EXPECT_EQ(bruckAllgatherFrom(bruckAllgatherTo(r, d, p), d, p), r);
        EXPECT_EQ(bruckAlltoallFrom(bruckAlltoallTo(r, d, p), d, p), r);
      }
      EXPECT_EQ(to.size(), static_cast<size_t>(p));
    }
    for (int r = 0; r < p; ++r) {
      std::set<int> peers;
      for (int s = 1; s < p; ++s) {
        peers.insert(pairwiseTo(r, s, p));
        EXPECT_EQ(pairwiseFrom(pairwiseTo(r, s, p), s, p), r);
      }
      EXPECT_EQ(peers.size(), static_cast<size_t>(p - 1));
      EXPECT_EQ(peers.count(r), 0u);
    }
  }
}

TEST(CollPatterns, BruckAllgatherGathersEverything) {
  // Simulate which blocks each rank holds (rotated) after the rounds.
  for (int p = 1; p <= 17; ++p) {
    std::vector<int> held(static_cast<size_t>(p), 1);
    for (int d = 1; d < p; d <<= 1) {
      const int n = bruckAllgatherCount(d, p);
      for (int r = 0; r < p; ++r) EXPECT_EQ(held[static_cast<size_t>(bruckAllgatherFrom(r, d, p))], d);
      for (int& h : held) h += n;
    }
    for (int h : held) EXPECT_EQ(h, p);
  }
}

TEST(CollPatterns, Fold) {
  for (int p = 1; p <= 33; ++p) {
    std::set<int> newRanks;
    int extras = 0, prevNew = -1;
    for (int r = 0; r < p; ++r) {
      const Fold f = fold(r, p);
      EXPECT_TRUE(isPow2(f.p2));
      EXPECT_EQ(f.p2 + f.rem, p);
      if (f.newRank < 0) {
        ++extras;
        EXPECT_EQ(fold(f.partner, p).partner, r);
        EXPECT_EQ(fold(f.partner, p).newRank, r / 2);
        continue;
      }
      EXPECT_GT(f.newRank, prevNew);  // order preserving
      prevNew = f.newRank;
      newRanks.insert(f.newRank);
      EXPECT_EQ(unfoldRank(f.newRank, f.rem), r);
      EXPECT_LE(foldFirstRank(f.newRank, f.rem), r);
      EXPECT_EQ(foldEndRank(f.newRank, f.rem), r + 1);
    }
    EXPECT_EQ(extras, fold(0, p).rem);
    EXPECT_EQ(static_cast<int>(newRanks.size()), fold(0, p).p2);
    // Ranges of newRanks are contiguous rank ranges covering everything.
    int next = 0;
    for (int v = 0; v < fold(0, p).p2; ++v) {
      EXPECT_EQ(foldFirstRank(v, fold(0, p).rem), next);
      next = foldEndRank(v, fold(0, p).rem);
    }
    EXPECT_EQ(next, p);
  }
}

TEST(CollPatterns, HalvingEndsWithOwnBlockAndDoublingRestores) {
  for (int p2 = 1; p2 <= 64; p2 <<= 1)
    for (int v = 0; v < p2; ++v) {
      int lo = 0, n = p2;
      for (int mask = p2 / 2; mask > 0; mask >>= 1) {
        const int k = halvingKeepFirst(v, mask), s = halvingSendFirst(v, mask);
        const int peer = v ^ mask;
        EXPECT_EQ(halvingKeepFirst(peer, mask), s);  // the partner keeps what I send
        EXPECT_TRUE(k == lo || k == lo + mask);
        EXPECT_TRUE(v >= k && v < k + mask);
        lo = k;
        n = mask;
      }
      EXPECT_EQ(lo, v);
      EXPECT_EQ(n, 1);
      for (int mask = 1; mask < p2; mask <<= 1) {
        EXPECT_EQ(doublingHeldFirst(v, mask) % mask, 0);
        EXPECT_EQ(doublingHeldFirst(v ^ mask, mask), doublingHeldFirst(v, mask) ^ mask);
      }
    }
}

TEST(CollPatterns, Blocks) {
  for (size_t n : {0, 1, 7, 100, 1021})
    for (size_t k : {1, 2, 3, 8, 13}) {
      size_t sum = 0;
      for (size_t i = 0; i < k; ++i) {
        EXPECT_EQ(blockOffset(n, k, i), sum);
        sum += blockSize(n, k, i);
        EXPECT_LE(blockSize(n, k, i), n / k + 1);
      }
      EXPECT_EQ(sum, n);
      EXPECT_EQ(blockOffset(n, k, k), n);
    }
}

TEST(CollPatterns, NodeLayout) {
  // Ranks 0..6 on nodes with ids 5, 2, 5, 9, 2, 5, 9: nodes in leader order are 5 (0, 2, 5),
  // 2 (1, 4), 9 (3, 6).
  const std::vector<uint32_t> ids = {5, 2, 5, 9, 2, 5, 9};
  NodeLayout l = nodeLayout(ids, 2);
  EXPECT_EQ(l.leaders, (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(l.local, (std::vector<int>{0, 2, 5}));
  EXPECT_EQ(l.nodeOf, (std::vector<int>{0, 1, 0, 2, 1, 0, 2}));
  EXPECT_EQ(l.localIndex, 1);
  EXPECT_EQ(l.leaderIndex, -1);
  NodeLayout m = nodeLayout(ids, 3);
  EXPECT_EQ(m.local, (std::vector<int>{3, 6}));
  EXPECT_EQ(m.localIndex, 0);
  EXPECT_EQ(m.leaderIndex, 2);
  EXPECT_EQ(ranksOfNode(m, 1), (std::vector<int>{1, 4}));

  EXPECT_TRUE(worthHierarchy(ids));
  EXPECT_FALSE(worthHierarchy({1, 1, 1, 1}));     // one node
  EXPECT_FALSE(worthHierarchy({1, 2, 3, 4}));     // one rank per node
  EXPECT_FALSE(worthHierarchy({1, 1}));           // too small to gain
  EXPECT_TRUE(worthHierarchy({1, 1, 2}));
}

}  // namespace
}  // namespace rrt::coll
