// Peer arithmetic of the collective algorithms: pure functions of (rank, size, step), no I/O,
// unit-tested on their own (tests/unit/coll_patterns_test.cc). Model: UCC's coll_patterns/.
//
// Conventions
//   - "relative rank" rel = (rank - root + size) % size: trees are built rooted at rel 0.
//   - Binomial tree over rel: the parent of rel is rel with its lowest set bit cleared; the
//     children of rel are rel + m for every power of two m below rel's lowest set bit (all
//     powers of two for rel 0) with rel + m < size. Subtree of rel = [rel, rel + subtreeSize).
//   - Folding (non-power-of-two recursive doubling / halving, as in MPICH): p2 = the largest power
//     of two <= size, rem = size - p2. Among ranks < 2*rem, each even rank is "extra": it hands
//     its data to rank + 1 and sits out; the odd one takes newRank = rank / 2. Ranks >= 2*rem
//     take newRank = rank - rem. newRank order follows rank order, so a contiguous range of
//     newRanks always stands for a contiguous range of ranks (order-preserving: non-commutative
//     operations stay correct).
//   - Blocks: n elements cut into k blocks as evenly as possible, the first n % k one larger.
#pragma once

#include <cstddef>

namespace rrt::coll {

constexpr bool isPow2(int n) { return n > 0 && (n & (n - 1)) == 0; }

// Largest power of two <= n (n >= 1).
constexpr int floorPow2(int n) {
  int p = 1;
  while (p <= n / 2) p <<= 1;
  return p;
}

// Smallest k with 2^k >= n (n >= 1).
constexpr int ceilLog2(int n) {
  int k = 0;
  while ((1 << k) < n) ++k;
  return k;
}

constexpr int toRelative(int rank, int root, int size) { return (rank - root + size) % size; }
constexpr int fromRelative(int rel, int root, int size) { return (rel + root) % size; }

// ---- binomial tree (over relative ranks) --------------------------------------------------

// -1 for the root (rel 0).
constexpr int binomialParent(int rel) { return rel == 0 ? -1 : rel & (rel - 1); }

// Number of ranks in the subtree rooted at rel (rel included).
constexpr int binomialSubtreeSize(int rel, int size) {
  int low = rel == 0 ? floorPow2(size) * 2 : (rel & -rel);
  int end = rel + low;
  return (end > size ? size : end) - rel;
}

// Writes the children of rel to out (ascending: rel+1, rel+2, rel+4, ...); returns how many.
// out must hold ceilLog2(size) entries.
inline int binomialChildren(int rel, int size, int* out) {
  int n = 0;
  int limit = rel == 0 ? floorPow2(size) * 2 : (rel & -rel);
  for (int m = 1; m < limit && rel + m < size; m <<= 1) out[n++] = rel + m;
  return n;
}

// ---- ring ---------------------------------------------------------------------------------

constexpr int ringRight(int rank, int size) { return (rank + 1) % size; }
constexpr int ringLeft(int rank, int size) { return (rank - 1 + size) % size; }
constexpr int mod(int a, int n) { return ((a % n) + n) % n; }

// ---- dissemination / Bruck ----------------------------------------------------------------
// Step k (distance d = 2^k): send to rank + d... (dissemination barrier)
constexpr int disseminationTo(int rank, int dist, int size) { return (rank + dist) % size; }
constexpr int disseminationFrom(int rank, int dist, int size) { return mod(rank - dist, size); }
// Bruck allgather, step with distance d: send the first min(d, size - d) blocks to rank - d,
// receive as many from rank + d (placed after the d blocks held).
constexpr int bruckAllgatherTo(int rank, int dist, int size) { return mod(rank - dist, size); }
constexpr int bruckAllgatherFrom(int rank, int dist, int size) { return (rank + dist) % size; }
constexpr int bruckAllgatherCount(int dist, int size) { return dist < size - dist ? dist : size - dist; }
// Bruck alltoall, step with distance d: the rotated blocks whose index has bit d set go to
// rank + d; as many come from rank - d.
constexpr int bruckAlltoallTo(int rank, int dist, int size) { return (rank + dist) % size; }
constexpr int bruckAlltoallFrom(int rank, int dist, int size) { return mod(rank - dist, size); }

// ---- pairwise exchange --------------------------------------------------------------------
// Step s in 1..size-1: send to rank + s, receive from rank - s (every pair once, any size).
constexpr int pairwiseTo(int rank, int step, int size) { return (rank + step) % size; }
constexpr int pairwiseFrom(int rank, int step, int size) { return mod(rank - step, size); }

// ---- folding for recursive doubling / halving ---------------------------------------------

struct Fold {
  int p2 = 1;       // participants after folding (a power of two)
  int rem = 0;      // size - p2
  int newRank = 0;  // -1 for an extra rank
  int partner = -1; // extra rank: the one it hands its data to; odd rank < 2*rem: its extra
};

constexpr Fold fold(int rank, int size) {
  Fold f;
  f.p2 = floorPow2(size);
  f.rem = size - f.p2;
  if (rank < 2 * f.rem) {
    if (rank % 2 == 0) {
      f.newRank = -1;
      f.partner = rank + 1;
    } else {
      f.newRank = rank / 2;
      f.partner = rank - 1;
    }
  } else {
    f.newRank = rank - f.rem;
  }
  return f;
}

// The rank that plays newRank.
constexpr int unfoldRank(int newRank, int rem) {
  return newRank < rem ? 2 * newRank + 1 : newRank + rem;
}
// The ranks newRank stands for: [foldFirstRank, foldEndRank).
constexpr int foldFirstRank(int newRank, int rem) {
  return newRank < rem ? 2 * newRank : newRank + rem;
}
constexpr int foldEndRank(int newRank, int rem) {
  return newRank < rem ? 2 * newRank + 2 : newRank + rem + 1;
}

// Recursive doubling / halving partner at distance mask.
constexpr int xorPartner(int rank, int mask) { return rank ^ mask; }

// Recursive halving over p2 newRanks at distance mask (p2/2, p2/4, ..., 1): before the step a
// newRank v holds a range of 2*mask newRanks' blocks; it keeps the half [halvingKeepFirst, +mask)
// (the half that contains v) and sends the other half [halvingSendFirst, +mask) to v ^ mask.
// After the last step v holds block v alone.
constexpr int halvingKeepFirst(int v, int mask) { return (v & ~(2 * mask - 1)) | (v & mask); }
constexpr int halvingSendFirst(int v, int mask) {
  return (v & ~(2 * mask - 1)) | ((v & mask) ^ mask);
}
// Recursive doubling at distance mask (1, 2, ..., p2/2): before the step v holds the blocks of
// newRanks [doublingHeldFirst(v, mask), +mask); it sends them to v ^ mask and gets the other half.
constexpr int doublingHeldFirst(int v, int mask) { return v & ~(mask - 1); }

// ---- blocks -------------------------------------------------------------------------------

constexpr size_t blockOffset(size_t n, size_t k, size_t i) {
  return i * (n / k) + (i < n % k ? i : n % k);
}
constexpr size_t blockSize(size_t n, size_t k, size_t i) {
  return n / k + (i < n % k ? 1 : 0);
}

}  // namespace rrt::coll
