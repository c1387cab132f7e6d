// Every algorithm of every collective, forced through RRT_COLL_<NAME>, at 1..16 ranks (powers
// of two and not) inside one process over the in-memory p2p (coll_sim.h), against a serial
// reference. Counts 0, 1, a prime and a multi-segment size; in place and not; several roots;
// eager and rendezvous p2p; several op x type pairs incl. a non-commutative user op (for the
// algorithms that accept one).
//
// Tolerance of floating-point sums: every algorithm adds the same p values in some order; any
// order of p-1 additions errs by at most gamma_{p-1} * sum|x_i| with gamma_n = n eps / (1 - n eps)
// (Higham, Accuracy and Stability, 4.2). Values are in [-1, 1], so the bound used is
// (p-1) * eps * p * 1.01. float16 / bfloat16 are checked exactly on small integers, whose sums
// are representable (< 2^11 resp. < 2^8), so any rounding error shows.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runtime/coll/op.h"
#include "runtime/coll/selection.h"
#include "runtime/core/datatype.h"
#include "tests/unit/coll_sim.h"

namespace rrt::coll {
namespace {

using sim::Mode;
using sim::World;
using Buf = std::vector<char>;

// RRT_COLL_TEST_QUICK=1 (CI's sanitizer pass, where the full set takes 9 minutes): every
// algorithm, configuration and mode still, at fewer rank counts (powers of two and not) and a
// smaller multi-segment count (4099 elements: 5 segments of 4K for 4-byte types).
bool quick() {
  static const bool q = [] {
    const char* v = getenv("RRT_COLL_TEST_QUICK");
    return v && *v && strcmp(v, "0") != 0;
  }();
  return q;
}
const std::vector<int>& rankCounts() {
  static const std::vector<int> full = {1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 16}, few = {1, 2, 3, 4, 5, 7, 8};
  return quick() ? few : full;
}
const std::vector<size_t>& counts() {
  static const std::vector<size_t> full = {0, 1, 1021, 20011}, few = {0, 1, 1021, 4099};
  return quick() ? few : full;
}
size_t largeCount() { return counts().back(); }

// memcpy of n bytes where either vector may be empty (its data() null: memcpy(_, nullptr, 0) is
// undefined behaviour, and UBSan says so).
void copyBytes(char* dst, const char* src, size_t n) {
  if (n) std::memcpy(dst, src, n);
}

// Forces one algorithm (and a small segment so pipelines have many segments) for a scope.
struct Force {
  CollKind kind;
  Force(CollKind k, const char* name, const char* segment = "4K") : kind(k) {
    setenv(kindEnvName(k), name, 1);
    setenv("RRT_COLL_SEGMENT", segment, 1);
    reloadSelection();
  }
  ~Force() {
    unsetenv(kindEnvName(kind));
    unsetenv("RRT_COLL_SEGMENT");
    reloadSelection();
  }
};

// ---- reduction configurations -------------------------------------------------------------

// x op y = "apply x, then y" for affine maps (a, b): (a_x a_y, b_x a_y + b_y) mod 2^32.
// Associative, not commutative.
void affineCompose(const void* in, void* inout, size_t count, rrt_datatype_t, void*) {
  const uint32_t* x = static_cast<const uint32_t*>(in);
  uint32_t* y = static_cast<uint32_t*>(inout);
  for (size_t i = 0; i < count; ++i) {
    const uint32_t a = x[2 * i] * y[2 * i], b = x[2 * i + 1] * y[2 * i] + y[2 * i + 1];
    y[2 * i] = a;
    y[2 * i + 1] = b;
  }
}

struct RedCfg {
  const char* name;
  rrt_datatype_t type;
  rrt_op_t op;
  bool commutative;
  bool floating;
  std::function<void(int rank, size_t i, void* elem)> gen;
};

std::vector<RedCfg>& redCfgs() {
  static std::vector<RedCfg> cfgs;
  if (!cfgs.empty()) return cfgs;
  cfgs.push_back({"int32_sum", RRT_INT32, RRT_SUM, true, false, [](int r, size_t i, void* e) {
                    int32_t v = static_cast<int32_t>((r + 1) * 1000003 + i * 7919);
                    std::memcpy(e, &v, 4);
                  }});
  cfgs.push_back({"double_sum", RRT_DOUBLE, RRT_SUM, true, true, [](int r, size_t i, void* e) {
                    double v = std::sin(static_cast<double>(r * 131 + i));
                    std::memcpy(e, &v, 8);
                  }});
  cfgs.push_back({"float16_sum", RRT_FLOAT16, RRT_SUM, true, false, [](int r, size_t i, void* e) {
                    uint16_t h = floatToHalf(static_cast<float>((r + i) % 9) - 4.0f);
                    std::memcpy(e, &h, 2);
                  }});
  cfgs.push_back({"bfloat16_max", RRT_BFLOAT16, RRT_MAX, true, false, [](int r, size_t i, void* e) {
                    uint16_t h = floatToBf16(static_cast<float>((r * 7 + i) % 13) - 6.0f);
                    std::memcpy(e, &h, 2);
                  }});
  rrt_datatype_t pair;
  EXPECT_EQ(core::typeContiguous(2, RRT_UINT32, &pair), Status::Ok);
  rrt_op_t affine;
  EXPECT_EQ(opCreate(affineCompose, nullptr, false, &affine), Status::Ok);
  cfgs.push_back({"user_affine", pair, affine, false, false, [](int r, size_t i, void* e) {
                    uint32_t v[2] = {static_cast<uint32_t>(2 * (r + i) + 1),
                                     static_cast<uint32_t>(r * 31 + i)};
                    std::memcpy(e, v, 8);
                  }});
  return cfgs;
}

size_t typeSize(rrt_datatype_t t) { return core::typeLookup(t)->size; }

Buf input(const RedCfg& c, int rank, size_t count) {
  const size_t ts = typeSize(c.type);
  Buf b(count * ts);
  for (size_t i = 0; i < count; ++i) c.gen(rank, i, b.data() + i * ts);
  return b;
}

// Serial reference: x_first op ... op x_{end-1}, in rank order.
Buf reference(const RedCfg& c, int first, int end, size_t count) {
  Reducer red;
  EXPECT_EQ(makeReducer(c.op, c.type, &red), Status::Ok);
  Buf acc = input(c, first, count);
  for (int r = first + 1; r < end; ++r) {
    Buf x = input(c, r, count);
    red.apply(acc.data(), x.data(), count);  // x = acc op x
    acc.swap(x);
  }
  return acc;
}

void expectClose(const RedCfg& c, const Buf& got, const Buf& want, int p, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  if (!c.floating) {
    for (size_t i = 0; i < got.size(); ++i)
      if (got[i] != want[i]) {
        ADD_FAILURE() << what << ": byte " << i << " differs";
        return;
      }
    return;
  }
  const double bound = (p - 1) * 2.220446049250313e-16 * p * 1.01;
  for (size_t i = 0; i < got.size() / 8; ++i) {
    double g, w;
    std::memcpy(&g, got.data() + 8 * i, 8);
    std::memcpy(&w, want.data() + 8 * i, 8);
    if (std::fabs(g - w) > bound) {
      ADD_FAILURE() << what << ": element " << i << " " << g << " vs " << w;
      return;
    }
  }
}

CollArgs redArgs(CollKind kind, const RedCfg& c, const void* s, void* r, size_t count) {
  CollArgs a;
  a.kind = kind;
  a.sbuf = s;
  a.rbuf = r;
  a.count = count;
  a.typeSize = typeSize(c.type);
  EXPECT_EQ(makeReducer(c.op, c.type, &a.reducer), Status::Ok);
  return a;
}

std::string tag(const Algorithm* a, int p, size_t n, bool inplace, Mode m, const char* extra = "") {
  return std::string(kindName(a->kind)) + "/" + a->name + " p=" + std::to_string(p) +
         " n=" + std::to_string(n) + (inplace ? " inplace" : "") +
         (m == Mode::Eager ? " eager" : " rndv") + " " + extra;
}

// Runs start() on every rank with args from make(r), waits, returns success.
bool runAll(World& w, const std::function<CollArgs(int)>& make) {
  std::vector<core::Request*> reqs;
  for (int r = 0; r < w.size(); ++r) {
    core::Request* q = nullptr;
    EXPECT_EQ(start(w.comm(r), make(r), &q), Status::Ok);
    reqs.push_back(q);
  }
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

std::vector<const Algorithm*> algos(CollKind k) {
  const Algorithm* a[16];
  int n = algorithmsOf(k, a, 16);
  return std::vector<const Algorithm*>(a, a + n);
}

const Mode kModes[] = {Mode::Eager, Mode::Rendezvous};

// Node placement of the simulated ranks (NodeAware below); nullptr: one node.
std::function<std::vector<uint32_t>(int p)> gNodes;
// Only this algorithm (NodeAware below); nullptr: all.
const char* gOnly = nullptr;

// Not the shared-memory algorithms: they need processes that share a segment (one process
// here would wait for itself); tests/coll runs them (coll_check, coll_shm_race).
std::vector<const Algorithm*> selected(CollKind k) {
  std::vector<const Algorithm*> out;
  for (const Algorithm* a : algos(k))
    if ((!gOnly || std::string(a->name) == gOnly) && !(a->flags & kSharedMemory)) out.push_back(a);
  return out;
}

// A World with the current node placement.
struct PlacedWorld : World {
  PlacedWorld(int p, Mode m, uint32_t seed) : World(p, m, seed) {
    if (gNodes) setNodes(gNodes(p));
  }
};

// ---- the tests ----------------------------------------------------------------------------

TEST(CollAlgorithms, Barrier) {
  for (const Algorithm* a : algos(CollKind::Barrier)) {
    Force f(CollKind::Barrier, a->name);
    for (int p : rankCounts())
      for (Mode m : kModes) {
        World w(p, m);
        EXPECT_TRUE(runAll(w, [](int) { return CollArgs{}; })) << tag(a, p, 0, false, m);
      }
  }
}

// The barrier property itself: while one rank has not entered, no rank leaves (each rank late
// in turn); once it enters, all leave.
TEST(CollAlgorithms, BarrierWaitsForTheLastRank) {
  for (const Algorithm* a : algos(CollKind::Barrier)) {
    Force f(CollKind::Barrier, a->name);
    for (int p : rankCounts())
      for (Mode m : kModes)
        for (int late = 0; late < p && p > 1; ++late) {
          World w(p, m);
          std::vector<core::Request*> early;
          for (int r = 0; r < p; ++r) {
            if (r == late) continue;
            core::Request* q = nullptr;
            ASSERT_EQ(start(w.comm(r), CollArgs{}, &q), Status::Ok);
            early.push_back(q);
          }
          EXPECT_FALSE(w.waitAll(early)) << tag(a, p, 0, false, m) << " late rank " << late;
          for (core::Request* q : early) EXPECT_FALSE(q->complete) << tag(a, p, 0, false, m);
          core::Request* last = nullptr;
          ASSERT_EQ(start(w.comm(late), CollArgs{}, &last), Status::Ok);
          std::vector<core::Request*> all = early;
          all.push_back(last);
          EXPECT_TRUE(w.waitAll(all)) << tag(a, p, 0, false, m) << " late rank " << late;
          for (core::Request* q : all)
            if (q->complete) core::requestRelease(q);
          EXPECT_EQ(w.unmatched(), 0u);
        }
  }
}

void bcastSuite() {
  for (const Algorithm* a : selected(CollKind::Bcast)) {
    Force f(CollKind::Bcast, a->name);
    for (int p : rankCounts())
      for (size_t n : counts())
        for (Mode m : kModes) {
          const int root = p > 2 ? p - 2 : 0;
          PlacedWorld w(p, m, static_cast<uint32_t>(p * 7 + n));
          std::vector<Buf> bufs(static_cast<size_t>(p), Buf(n * 4, 0));
          for (size_t i = 0; i < n * 4; ++i) bufs[static_cast<size_t>(root)][i] = static_cast<char>(i * 13 + 5);
          Buf want = bufs[static_cast<size_t>(root)];
          ASSERT_TRUE(runAll(w, [&](int r) {
            CollArgs x;
            x.kind = CollKind::Bcast;
            x.rbuf = bufs[static_cast<size_t>(r)].data();
            x.count = n;
            x.typeSize = 4;
            x.root = root;
            return x;
          })) << tag(a, p, n, false, m);
          for (int r = 0; r < p; ++r) EXPECT_EQ(bufs[static_cast<size_t>(r)], want) << tag(a, p, n, false, m) << " rank " << r;
        }
  }
}

TEST(CollAlgorithms, Bcast) { bcastSuite(); }

// Reduce, allreduce, scan, exscan share this driver.
void reductionSuite(CollKind kind) {
  for (const Algorithm* a : selected(kind)) {
    Force f(kind, a->name);
    for (const RedCfg& c : redCfgs()) {
      if (!c.commutative && (a->flags & kNeedsCommutative)) continue;
      for (int p : rankCounts())
        for (size_t n : counts())
          for (bool inplace : {false, true})
            for (Mode m : kModes) {
              if (m == Mode::Rendezvous && n > 1 && n < largeCount() && p % 3) continue;  // trim
              const int root = kind == CollKind::Reduce ? (p * 5 + static_cast<int>(n)) % p : 0;
              const size_t ts = typeSize(c.type);
              PlacedWorld w(p, m, static_cast<uint32_t>(p + n));
              std::vector<Buf> in, out;
              for (int r = 0; r < p; ++r) {
                in.push_back(input(c, r, n));
                out.push_back(inplace ? in.back() : Buf(n * ts, 0x5a));
              }
              const std::string what = tag(a, p, n, inplace, m, c.name);
              ASSERT_TRUE(runAll(w, [&](int r) {
                const size_t u = static_cast<size_t>(r);
                const bool ip = inplace && (kind != CollKind::Reduce || r == root);
                CollArgs x = redArgs(kind, c, ip ? RRT_IN_PLACE : in[u].data(), out[u].data(), n);
                x.root = root;
                return x;
              })) << what;
              for (int r = 0; r < p; ++r) {
                const size_t u = static_cast<size_t>(r);
                if (kind == CollKind::Reduce && r != root) continue;
                if (kind == CollKind::Exscan && r == 0) continue;
                const int first = 0;
                const int end = kind == CollKind::Scan ? r + 1 : kind == CollKind::Exscan ? r : p;
                Buf want = n ? reference(c, first, end, n) : Buf();
                expectClose(c, out[u], want, p, what + " rank " + std::to_string(r));
              }
            }
    }
  }
}

TEST(CollAlgorithms, Reduce) { reductionSuite(CollKind::Reduce); }
TEST(CollAlgorithms, Allreduce) { reductionSuite(CollKind::Allreduce); }
TEST(CollAlgorithms, Scan) { reductionSuite(CollKind::Scan); }
TEST(CollAlgorithms, Exscan) { reductionSuite(CollKind::Exscan); }

// Counts per rank for the v-variants: uneven, some zero.
size_t vcount(int r, size_t n) { return (r % 3 == 1) ? 0 : n + static_cast<size_t>(r) * 3; }

TEST(CollAlgorithms, ReduceScatter) {
  for (const Algorithm* a : algos(CollKind::ReduceScatter)) {
    Force f(CollKind::ReduceScatter, a->name);
    for (const RedCfg& c : redCfgs()) {
      if (!c.commutative && (a->flags & kNeedsCommutative)) continue;
      for (int p : rankCounts())
        for (size_t n : {size_t{0}, size_t{1}, size_t{97}, size_t{5003}})
          for (bool block : {true, false})
            for (bool inplace : {false, true}) {
              const Mode m = (n + p) % 2 ? Mode::Eager : Mode::Rendezvous;
              const size_t ts = typeSize(c.type);
              std::vector<size_t> counts, offs;
              size_t total = 0;
              for (int r = 0; r < p; ++r) {
                counts.push_back(block ? n : vcount(r, n));
                offs.push_back(total * ts);
                total += counts.back();
              }
              World w(p, m, static_cast<uint32_t>(3 * p + n));
              std::vector<Buf> in, out;
              for (int r = 0; r < p; ++r) {
                in.push_back(input(c, r, total));
                out.push_back(inplace ? in.back() : Buf(counts[static_cast<size_t>(r)] * ts, 0x5a));
              }
              const std::string what = tag(a, p, n, inplace, m, c.name) + (block ? " block" : " v");
              ASSERT_TRUE(runAll(w, [&](int r) {
                const size_t u = static_cast<size_t>(r);
                CollArgs x = redArgs(CollKind::ReduceScatter, c, inplace ? RRT_IN_PLACE : in[u].data(),
                                     out[u].data(), 0);
                for (int i = 0; i < p; ++i) x.recvBytes.push_back(counts[static_cast<size_t>(i)] * ts);
                x.recvOffs = offs;
                return x;
              })) << what;
              Buf want = total ? reference(c, 0, p, total) : Buf();
              for (int r = 0; r < p; ++r) {
                const size_t u = static_cast<size_t>(r);
                Buf got(out[u].begin(), out[u].begin() + static_cast<long>(counts[u] * ts));
                Buf exp(want.begin() + static_cast<long>(offs[u]), want.begin() + static_cast<long>(offs[u] + counts[u] * ts));
                expectClose(c, got, exp, p, what + " rank " + std::to_string(r));
              }
            }
    }
  }
}

char pattern(int from, int to, size_t i) { return static_cast<char>(from * 37 + to * 11 + i * 3 + 1); }

void gatherLikeSuite(CollKind kind) {
  const bool v = kind == CollKind::Allgatherv;
  for (const Algorithm* a : algos(kind)) {
    Force f(kind, a->name);
    for (int p : rankCounts())
      for (size_t n : counts())
        for (bool inplace : {false, true})
          for (Mode m : kModes) {
            if (m == Mode::Rendezvous && n > 1 && n < largeCount() && p % 3) continue;
            // Block sizes and (for v) shuffled, gapped displacements.
            std::vector<size_t> len, off;
            size_t extent = 0;
            for (int r = 0; r < p; ++r) len.push_back(v ? vcount(r, n) : n);
            for (int r = p - 1; r >= 0; --r) {  // reversed order with gaps for v
              const size_t u = static_cast<size_t>(r);
              if (!v) break;
              off.insert(off.begin(), 0);
              off[0] = extent;
              extent += len[u] + 5;
            }
            if (!v)
              for (int r = 0; r < p; ++r) off.push_back(static_cast<size_t>(r) * n), extent = static_cast<size_t>(p) * n;
            else {
              // off was built front-inserted in reverse: fix index order.
              std::vector<size_t> o(static_cast<size_t>(p));
              size_t e = 0;
              for (int r = p - 1; r >= 0; --r) {
                o[static_cast<size_t>(r)] = e;
                e += len[static_cast<size_t>(r)] + 5;
              }
              off = o;
            }
            World w(p, m, static_cast<uint32_t>(p * 11 + n));
            std::vector<Buf> in, out;
            for (int r = 0; r < p; ++r) {
              const size_t u = static_cast<size_t>(r);
              Buf b(len[u]);
              for (size_t i = 0; i < len[u]; ++i) b[i] = pattern(r, 0, i);
              in.push_back(b);
              Buf o(extent, 0x77);
              if (inplace) copyBytes(o.data() + off[u], b.data(), len[u]);
              out.push_back(o);
            }
            const std::string what = tag(a, p, n, inplace, m);
            ASSERT_TRUE(runAll(w, [&](int r) {
              const size_t u = static_cast<size_t>(r);
              CollArgs x;
              x.kind = kind;
              x.sbuf = inplace ? RRT_IN_PLACE : in[u].data();
              x.rbuf = out[u].data();
              x.blockBytes = n;
              if (v) {
                x.recvBytes = len;
                x.recvOffs = off;
              }
              return x;
            })) << what;
            for (int r = 0; r < p; ++r) {
              Buf want(extent, 0x77);
              for (int s = 0; s < p; ++s)
                copyBytes(want.data() + off[static_cast<size_t>(s)], in[static_cast<size_t>(s)].data(),
                          len[static_cast<size_t>(s)]);
              EXPECT_EQ(out[static_cast<size_t>(r)], want) << what << " rank " << r;
            }
          }
  }
}

TEST(CollAlgorithms, Allgather) { gatherLikeSuite(CollKind::Allgather); }
TEST(CollAlgorithms, Allgatherv) { gatherLikeSuite(CollKind::Allgatherv); }

void alltoallSuite(CollKind kind) {
  const bool v = kind == CollKind::Alltoallv;
  for (const Algorithm* a : algos(kind)) {
    Force f(kind, a->name);
    for (int p : rankCounts())
      for (size_t n : {size_t{0}, size_t{1}, size_t{1021}, size_t{7000}})
        for (bool inplace : {false, true})
          for (Mode m : kModes) {
            // Bytes from s to d: n, or (v) depends on both; same layout on both sides.
            auto bytes = [&](int s, int d) { return v ? ((s + 2 * d) % 4 == 3 ? 0 : n + static_cast<size_t>(s * 5 + d)) : n; };
            World w(p, m, static_cast<uint32_t>(p * 13 + n));
            std::vector<Buf> in, out;
            std::vector<std::vector<size_t>> sb(static_cast<size_t>(p)), so(static_cast<size_t>(p)), rb(static_cast<size_t>(p)), ro(static_cast<size_t>(p));
            for (int r = 0; r < p; ++r) {
              const size_t u = static_cast<size_t>(r);
              size_t se = 0, re = 0;
              for (int d = 0; d < p; ++d) {
                sb[u].push_back(bytes(r, d));
                so[u].push_back(se);
                se += sb[u].back() + (v ? 3 : 0);
                rb[u].push_back(bytes(d, r));
              }
              for (int d = p - 1; d >= 0; --d) {  // v: receive blocks laid out in reverse
                if (!v) break;
                (void)d;
              }
              for (int d = 0; d < p; ++d) {
                ro[u].push_back(v ? 0 : re);
                re += rb[u][static_cast<size_t>(d)] + (v ? 2 : 0);
              }
              if (v) {
                size_t e = 0;
                for (int d = p - 1; d >= 0; --d) {
                  ro[u][static_cast<size_t>(d)] = e;
                  e += rb[u][static_cast<size_t>(d)] + 2;
                }
              }
              if (inplace) {  // in place: the send layout is the receive layout
                sb[u] = rb[u];
                so[u] = ro[u];
                se = re;
              }
              Buf b(se, 0);
              for (int d = 0; d < p; ++d)
                for (size_t i = 0; i < sb[u][static_cast<size_t>(d)]; ++i) b[so[u][static_cast<size_t>(d)] + i] = pattern(r, d, i);
              in.push_back(b);
              out.push_back(inplace ? b : Buf(re, 0x33));
            }
            if (inplace && v) {
              // In place needs symmetric counts (bytes(s,d) == bytes(d,s)) - MPI's rule.
              bool sym = true;
              for (int s = 0; s < p; ++s)
                for (int d = 0; d < p; ++d) sym = sym && bytes(s, d) == bytes(d, s);
              if (!sym) continue;
            }
            const std::string what = tag(a, p, n, inplace, m);
            ASSERT_TRUE(runAll(w, [&](int r) {
              const size_t u = static_cast<size_t>(r);
              CollArgs x;
              x.kind = kind;
              x.sbuf = inplace ? RRT_IN_PLACE : in[u].data();
              x.rbuf = out[u].data();
              x.blockBytes = n;
              if (v) {
                x.sendBytes = sb[u];
                x.sendOffs = so[u];
                x.recvBytes = rb[u];
                x.recvOffs = ro[u];
              }
              return x;
            })) << what;
            for (int r = 0; r < p; ++r) {
              const size_t u = static_cast<size_t>(r);
              for (int s = 0; s < p; ++s)
                for (size_t i = 0; i < rb[u][static_cast<size_t>(s)]; ++i)
                  if (out[u][ro[u][static_cast<size_t>(s)] + i] != pattern(s, r, i)) {
                    ADD_FAILURE() << what << " rank " << r << " from " << s << " byte " << i;
                    goto next;
                  }
            next:;
            }
          }
  }
}

TEST(CollAlgorithms, Alltoall) { alltoallSuite(CollKind::Alltoall); }
TEST(CollAlgorithms, Alltoallv) { alltoallSuite(CollKind::Alltoallv); }

void rootedSuite(CollKind kind) {
  const bool v = kind == CollKind::Gatherv || kind == CollKind::Scatterv;
  const bool gather = kind == CollKind::Gather || kind == CollKind::Gatherv;
  for (const Algorithm* a : algos(kind)) {
    Force f(kind, a->name);
    for (int p : rankCounts())
      for (size_t n : counts())
        for (bool inplace : {false, true})
          for (Mode m : kModes) {
            const int root = (p + static_cast<int>(n)) % p;
            std::vector<size_t> len, off;
            size_t extent = 0;
            for (int r = 0; r < p; ++r) len.push_back(v ? vcount(r, n) : n);
            off.assign(static_cast<size_t>(p), 0);
            for (int r = p - 1; r >= 0; --r) {
              const size_t u = static_cast<size_t>(r);
              off[u] = v ? extent : u * n;
              extent = v ? extent + len[u] + 1 : static_cast<size_t>(p) * n;
            }
            World w(p, m, static_cast<uint32_t>(p * 17 + n));
            // gather: small[r] -> big at root; scatter: big at root -> small[r].
            std::vector<Buf> small(static_cast<size_t>(p));
            Buf big(extent, 0x44);
            Buf bigWant(extent, 0x44);
            for (int r = 0; r < p; ++r) {
              const size_t u = static_cast<size_t>(r);
              for (size_t i = 0; i < len[u]; ++i) bigWant[off[u] + i] = pattern(r, root, i);
              small[u].assign(len[u], gather ? 0 : 0x11);
              if (gather)
                for (size_t i = 0; i < len[u]; ++i) small[u][i] = pattern(r, root, i);
            }
            if (!gather || inplace) big = bigWant;
            if (gather && inplace) {  // only the root's block is there beforehand
              big.assign(extent, 0x44);
              copyBytes(big.data() + off[static_cast<size_t>(root)], small[static_cast<size_t>(root)].data(), len[static_cast<size_t>(root)]);
            }
            const std::string what = tag(a, p, n, inplace, m);
            ASSERT_TRUE(runAll(w, [&](int r) {
              const size_t u = static_cast<size_t>(r);
              CollArgs x;
              x.kind = kind;
              x.root = root;
              x.blockBytes = len[u];
              const bool ip = inplace && r == root;
              if (gather) {
                x.sbuf = ip ? RRT_IN_PLACE : small[u].data();
                x.rbuf = r == root ? big.data() : nullptr;
                if (v && r == root) {
                  x.recvBytes = len;
                  x.recvOffs = off;
                }
              } else {
                x.sbuf = r == root ? big.data() : nullptr;
                x.rbuf = ip ? RRT_IN_PLACE : small[u].data();
                if (v && r == root) {
                  x.sendBytes = len;
                  x.sendOffs = off;
                }
              }
              if (!v) x.blockBytes = n;
              return x;
            })) << what;
            if (gather) {
              EXPECT_EQ(big, bigWant) << what;
            } else {
              for (int r = 0; r < p; ++r) {
                const size_t u = static_cast<size_t>(r);
                if (inplace && r == root) continue;
                Buf want(bigWant.begin() + static_cast<long>(off[u]), bigWant.begin() + static_cast<long>(off[u] + len[u]));
                EXPECT_EQ(small[u], want) << what << " rank " << r;
              }
            }
          }
  }
}

TEST(CollAlgorithms, Gather) { rootedSuite(CollKind::Gather); }
TEST(CollAlgorithms, Gatherv) { rootedSuite(CollKind::Gatherv); }
TEST(CollAlgorithms, Scatter) { rootedSuite(CollKind::Scatter); }
TEST(CollAlgorithms, Scatterv) { rootedSuite(CollKind::Scatterv); }

// Several collectives outstanding on one communicator plus one on a split communicator, all
// posted before any progress; completion order is free.
TEST(CollAlgorithms, ManyOutstandingAndSplit) {
  for (int p : {3, 4, 7, 8}) {
    World w(p, Mode::Rendezvous, 99);
    std::vector<int> color;
    for (int r = 0; r < p; ++r) color.push_back(r % 2);
    auto sub = w.split(color, 8);
    const RedCfg& c = redCfgs()[0];
    const size_t n = 3001;
    std::vector<Buf> in, out1, out2, out3;
    std::vector<core::Request*> reqs;
    for (int r = 0; r < p; ++r) {
      in.push_back(input(c, r, n));
      out1.push_back(Buf(n * 4));
      out2.push_back(Buf(n * 4));
      out3.push_back(Buf(n * 4));
    }
    for (int r = 0; r < p; ++r) {
      const size_t u = static_cast<size_t>(r);
      core::Request* q;
      setenv("RRT_COLL_ALLREDUCE", r % 2 ? "ring" : "ring", 1);  // same on all ranks
      reloadSelection();
      ASSERT_EQ(start(w.comm(r), redArgs(CollKind::Allreduce, c, in[u].data(), out1[u].data(), n), &q), Status::Ok);
      reqs.push_back(q);
      setenv("RRT_COLL_ALLREDUCE", "rabenseifner", 1);
      reloadSelection();
      ASSERT_EQ(start(w.comm(r), redArgs(CollKind::Allreduce, c, in[u].data(), out2[u].data(), n), &q), Status::Ok);
      reqs.push_back(q);
      ASSERT_EQ(start(*sub[u], redArgs(CollKind::Allreduce, c, in[u].data(), out3[u].data(), n), &q), Status::Ok);
      reqs.push_back(q);
      unsetenv("RRT_COLL_ALLREDUCE");
      reloadSelection();
    }
    ASSERT_TRUE(w.waitAll(reqs));
    for (core::Request* q : reqs) {
      EXPECT_EQ(q->status.error, RRT_SUCCESS);
      core::requestRelease(q);
    }
    Buf want = reference(c, 0, p, n);
    for (int r = 0; r < p; ++r) {
      const size_t u = static_cast<size_t>(r);
      EXPECT_EQ(out1[u], want) << "p=" << p << " rank " << r;
      EXPECT_EQ(out2[u], want) << "p=" << p << " rank " << r;
      // The sub-communicator: ranks of the same parity.
      Buf s = input(c, r % 2, n);
      Reducer red;
      ASSERT_EQ(makeReducer(c.op, c.type, &red), Status::Ok);
      for (int q = r % 2 + 2; q < p; q += 2) {
        Buf x = input(c, q, n);
        red.apply(s.data(), x.data(), n);
        s.swap(x);
      }
      EXPECT_EQ(out3[u], s) << "split p=" << p << " rank " << r;
    }
    EXPECT_EQ(activeCount(), 0u);
  }
}

// The node-aware algorithms over several placements of the ranks on nodes: blocks of 2 and of
// 3, round-robin over 2 nodes, and uneven (1, 3, then the rest). Each must equal the reference;
// and the table must pick them exactly when the placement is worth a hierarchy.
TEST(CollAlgorithms, NodeAware) {
  const std::vector<std::function<std::vector<uint32_t>(int)>> placements = {
      [](int p) { std::vector<uint32_t> n; for (int r = 0; r < p; ++r) n.push_back(static_cast<uint32_t>(r / 2)); return n; },
      [](int p) { std::vector<uint32_t> n; for (int r = 0; r < p; ++r) n.push_back(static_cast<uint32_t>(100 + r / 3)); return n; },
      [](int p) { std::vector<uint32_t> n; for (int r = 0; r < p; ++r) n.push_back(static_cast<uint32_t>(r % 2 ? 7 : 3)); return n; },
      [](int p) { std::vector<uint32_t> n; for (int r = 0; r < p; ++r) n.push_back(r < 1 ? 9u : r < 4 ? 1u : 5u); return n; },
  };
  gOnly = "hierarchical";
  for (const auto& place : placements) {
    gNodes = place;
    bcastSuite();
    reductionSuite(CollKind::Allreduce);
  }
  gNodes = nullptr;
  gOnly = nullptr;

  CollArgs a;
  a.kind = CollKind::Allreduce;
  a.count = 16;
  a.typeSize = 4;
  ASSERT_EQ(makeReducer(RRT_SUM, RRT_INT32, &a.reducer), Status::Ok);
  EXPECT_STREQ(select(a, 8, true)->name, "hierarchical");
  EXPECT_STRNE(select(a, 8, false)->name, "hierarchical");
  CollArgs b;
  b.kind = CollKind::Bcast;
  b.count = 16;
  b.typeSize = 4;
  EXPECT_STREQ(select(b, 8, true)->name, "hierarchical");
  EXPECT_STRNE(select(b, 8, false)->name, "hierarchical");
}

}  // namespace
}  // namespace rrt::coll
