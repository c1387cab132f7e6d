// rrt_stress: a soak test. Rounds of random point-to-point traffic (sizes 0 B to --max-size,
// default 16 MiB; random tags; wildcard or specific receives; blocking, non-blocking and
// synchronous sends), each followed by a random collective, on random communicators (world, a
// dup, an even/odd split, a mod-3 split with reversed keys). Every payload is checksummed and
// checked on arrival; every planned message must arrive exactly once; collective results are
// checked against what they must be.
//
//   rrun -n 4 apps/rrt_stress [--minutes M | --seconds S | --rounds N] [--max-size BYTES]
//                             [--seed N] [--first-round N] [-v]
//
// All ranks draw the same plan from the seed (one generator per communicator and round), so no
// plan is exchanged, and a round's plan depends only on the seed and its number: a failing
// round is replayed alone with --first-round R --rounds R (same seed and rank count). Rank 0 decides when to stop (time or rounds) and tells the others with a
// bcast. Output: one summary line with rounds, messages, bytes, collectives and mismatches, then
// "PASS rrt_stress (N ranks)" when there were no mismatches (exit 0), else exit 1.
#include <rrt/rrt.h>

#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

// ---- deterministic randomness ----------------------------------------------------------------

struct Rng {
  uint64_t s;
  explicit Rng(uint64_t seed) : s(seed * 0x9e3779b97f4a7c15ull + 0x632be59bd9b4e019ull) { next(); }
  uint64_t next() {  // splitmix64
    uint64_t z = (s += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
};

uint64_t mix(uint64_t a, uint64_t b) { return Rng(a ^ (b * 0xff51afd7ed558ccdull)).next(); }

// ---- payloads ---------------------------------------------------------------------------------
// A message starts with a header (when it has room for one) naming it; the rest is a pattern
// derived from the header, so the receiver checks every byte without knowing the plan.

struct Header {
  uint64_t magic;
  uint64_t round;
  uint32_t index;  // message number in the round's plan
  int32_t src;     // sender's rank in the communicator
  uint64_t size;
  uint64_t sum;    // checksum of the pattern bytes after the header
};
constexpr uint64_t kMagic = 0x7272742d73747273ull;  // "rrt-strs"

void fillPattern(uint8_t* p, size_t n, uint64_t key) {
  uint64_t x = key | 1;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    memcpy(p + i, &x, 8);
  }
  for (; i < n; ++i) p[i] = static_cast<uint8_t>(key >> (8 * (i % 8)));
}

uint64_t checksum(const uint8_t* p, size_t n) {
  uint64_t a = 1, b = 0;  // Fletcher-style over 32-bit words would be faster; bytes are enough
  for (size_t i = 0; i < n; ++i) {
    a = (a + p[i]) % 4294967291ull;
    b = (b + a) % 4294967291ull;
  }
  return (b << 32) | a;
}

uint64_t messageKey(uint64_t round, uint32_t index, int src) {
  return mix(mix(round, index), static_cast<uint64_t>(src) + 1);
}

void makeMessage(std::vector<uint8_t>& buf, uint64_t round, uint32_t index, int src, size_t size) {
  buf.resize(size);
  if (size < sizeof(Header)) {
    fillPattern(buf.data(), size, messageKey(round, index, src));
    return;
  }
  uint8_t* body = buf.data() + sizeof(Header);
  const size_t bodyLen = size - sizeof(Header);
  fillPattern(body, bodyLen, messageKey(round, index, src));
  Header h{kMagic, round, index, src, size, checksum(body, bodyLen)};
  memcpy(buf.data(), &h, sizeof h);
}

// ---- options ----------------------------------------------------------------------------------

struct Options {
  double seconds = 10;
  long rounds = -1;  // -1: by time
  size_t maxSize = size_t{16} << 20;
  uint64_t seed = 1;
  uint64_t firstRound = 1;
  bool verbose = false;
};

bool parseSize(const char* s, size_t* out) {
  char* end = nullptr;
  unsigned long long v = strtoull(s, &end, 10);
  if (end == s) return false;
  if (*end == 'K' || *end == 'k') v <<= 10, ++end;
  else if (*end == 'M' || *end == 'm') v <<= 20, ++end;
  if (*end != '\0') return false;
  *out = static_cast<size_t>(v);
  return true;
}

bool parseOptions(int argc, char** argv, Options* o) {
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (a == "-v") {
      o->verbose = true;
    } else if (a == "--minutes" && (v = next())) {
      o->seconds = atof(v) * 60;
    } else if (a == "--seconds" && (v = next())) {
      o->seconds = atof(v);
    } else if (a == "--rounds" && (v = next())) {
      o->rounds = atol(v);
    } else if (a == "--max-size" && (v = next())) {
      if (!parseSize(v, &o->maxSize)) return false;
    } else if (a == "--seed" && (v = next())) {
      o->seed = strtoull(v, nullptr, 10);
    } else if (a == "--first-round" && (v = next())) {
      o->firstRound = strtoull(v, nullptr, 10);
      if (o->firstRound == 0) return false;
    } else {
      return false;
    }
  }
  return o->seconds >= 0 && o->maxSize <= (size_t{1} << 30);
}

// ---- the run ----------------------------------------------------------------------------------

struct Totals {
  uint64_t messages = 0, bytes = 0, collectives = 0, mismatches = 0, rounds = 0;
};

Totals gTotals;
bool gVerbose = false;
int gWorldRank = 0;

void mismatch(const char* what, uint64_t round, long detail) {
  ++gTotals.mismatches;
  fprintf(stderr, "FAIL rrt_stress: rank %d round %" PRIu64 ": %s (%ld)\n", gWorldRank, round,
          what, detail);
}

void check(int rc, const char* call, uint64_t round) {
  if (rc != RRT_SUCCESS) {
    fprintf(stderr, "FAIL rrt_stress: rank %d round %" PRIu64 ": %s: %s\n", gWorldRank, round,
            call, rrt_strerror(rc));
    rrt_abort(RRT_COMM_WORLD, 3);
  }
}

struct Planned {
  int src, dst, tag;
  size_t size;
  int sendKind;  // 0 isend, 1 send, 2 ssend, 3 issend
};

// A size: mostly small, some medium, a few large, now and then the largest.
size_t drawSize(Rng& g, size_t maxSize) {
  const uint64_t r = g.below(100);
  size_t cap = r < 45 ? 256 : r < 75 ? 64 << 10 : r < 95 ? 1 << 20 : maxSize;
  cap = std::min(cap, maxSize);
  if (g.below(50) == 0) return cap;  // exact boundaries now and then
  return static_cast<size_t>(g.below(cap + 1));
}

// Verifies a received message; returns its plan index or -1.
long verify(const uint8_t* buf, size_t got, const rrt_status_t& st, uint64_t round,
            const std::vector<Planned>& plan, const std::vector<uint32_t>& mine,
            const std::vector<int>& seen) {
  if (st.error != RRT_SUCCESS) {
    mismatch("receive status error", round, st.error);
    return -1;
  }
  if (got >= sizeof(Header)) {
    Header h;
    memcpy(&h, buf, sizeof h);
    if (h.magic != kMagic || h.round != round || h.size != got || h.src != st.source ||
        h.index >= plan.size()) {
      mismatch("bad header", round, static_cast<long>(got));
      return -1;
    }
    const Planned& p = plan[h.index];
    if (p.src != st.source || p.tag != st.tag || p.size != got) {
      mismatch("message does not match its plan entry", round, h.index);
      return -1;
    }
    if (checksum(buf + sizeof h, got - sizeof h) != h.sum) {
      mismatch("checksum mismatch", round, h.index);
      return -1;
    }
    std::vector<uint8_t> expect;
    makeMessage(expect, round, h.index, h.src, got);
    if (memcmp(expect.data(), buf, got) != 0) {
      mismatch("payload differs from its pattern", round, h.index);
      return -1;
    }
    return h.index;
  }
  // Too small for a header: the first message not yet seen with this source, tag, size and
  // pattern (equal candidates, e.g. empty ones, are indistinguishable, and order among them
  // is plan order).
  for (uint32_t idx : mine) {
    const Planned& p = plan[idx];
    if (seen[idx] || p.src != st.source || p.tag != st.tag || p.size != got) continue;
    std::vector<uint8_t> expect;
    makeMessage(expect, round, idx, p.src, got);
    // An empty message matches by its envelope alone (memcmp of an empty vector's nullptr is
    // undefined behaviour, which UBSan reports).
    if (got == 0 || memcmp(expect.data(), buf, got) == 0) return idx;
  }
  mismatch("small message matches no plan entry", round, static_cast<long>(got));
  return -1;
}

void p2pRound(rrt_comm_t comm, uint64_t round, Rng& g, const Options& o) {
  int rank, size;
  rrt_comm_rank(comm, &rank);
  rrt_comm_size(comm, &size);
  const bool wild = g.below(3) == 0;
  const int nmsg = static_cast<int>(g.below(static_cast<uint64_t>(size) * 6 + 1));
  std::vector<Planned> plan;
  size_t budget = size_t{96} << 20;  // bytes in flight per round, all ranks together
  for (int i = 0; i < nmsg; ++i) {
    Planned p;
    p.src = static_cast<int>(g.below(static_cast<uint64_t>(size)));
    p.dst = static_cast<int>(g.below(static_cast<uint64_t>(size)));
    p.tag = static_cast<int>(g.below(5));
    p.size = drawSize(g, o.maxSize);
    if (p.size > budget) p.size = g.below(257);
    budget -= p.size;
    p.sendKind = static_cast<int>(g.below(4));
    plan.push_back(p);
  }
  // Receives to this rank, in plan order (which is the send order per (src, tag)).
  std::vector<uint32_t> mine;
  size_t maxIn = 0;
  for (uint32_t i = 0; i < plan.size(); ++i)
    if (plan[i].dst == rank) {
      mine.push_back(i);
      maxIn = std::max(maxIn, plan[i].size);
    }
  std::vector<std::vector<uint8_t>> rbuf(mine.size());
  std::vector<rrt_request_t> rreq(mine.size());
  for (size_t k = 0; k < mine.size(); ++k) {
    const Planned& p = plan[mine[k]];
    if (wild) {
      // Any source and/or any tag; big enough for whatever comes.
      const int how = static_cast<int>(mix(round, k) % 3);
      rbuf[k].resize(maxIn);
      const int src = how == 1 ? p.src : RRT_ANY_SOURCE;
      const int tag = how == 2 ? p.tag : RRT_ANY_TAG;
      // A receive naming a source or tag must not steal a message planned for another
      // wildcard: keep it fully wild unless every message to us agrees on that field.
      bool srcSame = true, tagSame = true;
      for (uint32_t idx : mine) {
        srcSame &= plan[idx].src == p.src;
        tagSame &= plan[idx].tag == p.tag;
      }
      check(rrt_irecv(rbuf[k].data(), maxIn, RRT_BYTE, srcSame ? src : RRT_ANY_SOURCE,
                      tagSame ? tag : RRT_ANY_TAG, comm, &rreq[k]),
            "irecv", round);
    } else {
      rbuf[k].resize(p.size);
      check(rrt_irecv(rbuf[k].data(), p.size, RRT_BYTE, p.src, p.tag, comm, &rreq[k]), "irecv",
            round);
    }
  }
  // Sends from this rank, in plan order.
  std::vector<std::vector<uint8_t>> sbuf;
  std::vector<rrt_request_t> sreq;
  for (uint32_t i = 0; i < plan.size(); ++i) {
    const Planned& p = plan[i];
    if (p.src != rank) continue;
    std::vector<uint8_t> m;
    makeMessage(m, round, i, rank, p.size);
    rrt_request_t r = nullptr;
    switch (p.sendKind) {
      case 0:
      case 3:
        sbuf.push_back(std::move(m));
        check((p.sendKind == 0 ? rrt_isend : rrt_issend)(sbuf.back().data(), p.size, RRT_BYTE,
                                                         p.dst, p.tag, comm, &r),
              "isend", round);
        sreq.push_back(r);
        break;
      case 1: check(rrt_send(m.data(), p.size, RRT_BYTE, p.dst, p.tag, comm), "send", round); break;
      case 2: check(rrt_ssend(m.data(), p.size, RRT_BYTE, p.dst, p.tag, comm), "ssend", round); break;
    }
    gTotals.messages++;
    gTotals.bytes += p.size;
  }
  std::vector<rrt_status_t> st(mine.size());
  check(rrt_waitall(rreq.size(), rreq.data(), st.data()), "waitall(recv)", round);
  check(rrt_waitall(sreq.size(), sreq.data(), RRT_STATUSES_IGNORE), "waitall(send)", round);
  // Wildcard receives may take any message on comm, also one of a later round sent by a rank
  // that is already there (the round's collective need not hold it back: a bcast root or a
  // reduce leaf leaves early). So nobody starts the next round before every wildcard receive
  // of this one is done. (Found by a 30-minute soak: seed 4242, round 119 took a message of
  // round 120.) Specific receives need no barrier: non-overtaking keeps rounds apart.
  if (wild) check(rrt_barrier(comm), "barrier(wildcard round)", round);
  std::vector<int> seen(plan.size(), 0);
  for (size_t k = 0; k < mine.size(); ++k) {
    const long idx = verify(rbuf[k].data(), st[k].bytes, st[k], round, plan, mine, seen);
    if (idx < 0) continue;
    if (seen[idx]++) mismatch("message received twice", round, idx);
    if (!wild && static_cast<uint32_t>(idx) != mine[k])
      mismatch("non-overtaking order violated", round, idx);
  }
  for (uint32_t idx : mine)
    if (!seen[idx]) mismatch("planned message never arrived", round, idx);
}

void collRound(rrt_comm_t comm, uint64_t round, Rng& g, const Options& o) {
  int rank, size;
  rrt_comm_rank(comm, &rank);
  rrt_comm_size(comm, &size);
  const int kind = static_cast<int>(g.below(7));
  const size_t count = static_cast<size_t>(g.below(g.below(4) == 0 ? (o.maxSize / 8 / size) + 1 : 2048));
  const int root = static_cast<int>(g.below(static_cast<uint64_t>(size)));
  const bool nonblocking = g.below(2) == 0;
  gTotals.collectives++;
  auto value = [&](int r, size_t i) -> int64_t {
    return static_cast<int64_t>(mix(mix(round, static_cast<uint64_t>(r)), i) & 0xffffff);
  };
  switch (kind) {
    case 0: {  // allreduce sum
      std::vector<int64_t> in(count), out(count, -1);
      for (size_t i = 0; i < count; ++i) in[i] = value(rank, i);
      if (nonblocking) {
        rrt_request_t r;
        check(rrt_iallreduce(in.data(), out.data(), count, RRT_INT64, RRT_SUM, comm, &r), "iallreduce", round);
        check(rrt_wait(&r, RRT_STATUS_IGNORE), "wait(iallreduce)", round);
      } else {
        check(rrt_allreduce(in.data(), out.data(), count, RRT_INT64, RRT_SUM, comm), "allreduce", round);
      }
      for (size_t i = 0; i < count; ++i) {
        int64_t want = 0;
        for (int r = 0; r < size; ++r) want += value(r, i);
        if (out[i] != want) { mismatch("allreduce result", round, static_cast<long>(i)); break; }
      }
      break;
    }
    case 1: {  // bcast of a message with a checked pattern
      std::vector<uint8_t> buf;
      makeMessage(buf, round, 0xb0b0, root, count * 8);
      std::vector<uint8_t> got(buf.size(), 0);
      if (rank == root) got = buf;
      if (nonblocking) {
        rrt_request_t r;
        check(rrt_ibcast(got.data(), got.size(), RRT_BYTE, root, comm, &r), "ibcast", round);
        check(rrt_wait(&r, RRT_STATUS_IGNORE), "wait(ibcast)", round);
      } else {
        check(rrt_bcast(got.data(), got.size(), RRT_BYTE, root, comm), "bcast", round);
      }
      if (got != buf) mismatch("bcast payload", round, root);
      break;
    }
    case 2: {  // allgather
      const size_t c = std::min<size_t>(count, 4096);
      std::vector<int64_t> in(c), out(c * size, -1);
      for (size_t i = 0; i < c; ++i) in[i] = value(rank, i);
      check(rrt_allgather(in.data(), c, RRT_INT64, out.data(), c, RRT_INT64, comm), "allgather", round);
      for (int r = 0; r < size; ++r)
        for (size_t i = 0; i < c; ++i)
          if (out[r * c + i] != value(r, i)) { mismatch("allgather block", round, r); r = size; break; }
      break;
    }
    case 3: {  // alltoall
      const size_t c = std::min<size_t>(count, 2048);
      std::vector<int64_t> in(c * size), out(c * size, -1);
      for (int d = 0; d < size; ++d)
        for (size_t i = 0; i < c; ++i) in[d * c + i] = value(rank, d * 100003 + i);
      check(rrt_alltoall(in.data(), c, RRT_INT64, out.data(), c, RRT_INT64, comm), "alltoall", round);
      for (int s = 0; s < size; ++s)
        for (size_t i = 0; i < c; ++i)
          if (out[s * c + i] != value(s, rank * 100003 + i)) { mismatch("alltoall block", round, s); s = size; break; }
      break;
    }
    case 4: {  // reduce (max) to a root
      std::vector<int64_t> in(count), out(count, -1);
      for (size_t i = 0; i < count; ++i) in[i] = value(rank, i);
      check(rrt_reduce(in.data(), out.data(), count, RRT_INT64, RRT_MAX, root, comm), "reduce", round);
      if (rank == root)
        for (size_t i = 0; i < count; ++i) {
          int64_t want = INT64_MIN;
          for (int r = 0; r < size; ++r) want = std::max(want, value(r, i));
          if (out[i] != want) { mismatch("reduce result", round, static_cast<long>(i)); break; }
        }
      break;
    }
    case 5: {  // gather
      const size_t c = std::min<size_t>(count, 4096);
      std::vector<int64_t> in(c), out(rank == root ? c * size : 0);
      for (size_t i = 0; i < c; ++i) in[i] = value(rank, i);
      check(rrt_gather(in.data(), c, RRT_INT64, out.data(), c, RRT_INT64, root, comm), "gather", round);
      if (rank == root)
        for (int r = 0; r < size; ++r)
          for (size_t i = 0; i < c; ++i)
            if (out[r * c + i] != value(r, i)) { mismatch("gather block", round, r); r = size; break; }
      break;
    }
    default: {
      if (nonblocking) {
        rrt_request_t r;
        check(rrt_ibarrier(comm, &r), "ibarrier", round);
        check(rrt_wait(&r, RRT_STATUS_IGNORE), "wait(ibarrier)", round);
      } else {
        check(rrt_barrier(comm), "barrier", round);
      }
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  int rc = rrt_init(&argc, &argv);
  if (rc != RRT_SUCCESS) {
    fprintf(stderr, "rrt_stress: rrt_init: %s\n", rrt_strerror(rc));
    return 1;
  }
  Options o;
  int size;
  rrt_comm_rank(RRT_COMM_WORLD, &gWorldRank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  if (!parseOptions(argc, argv, &o)) {
    if (gWorldRank == 0)
      fprintf(stderr, "usage: rrt_stress [--minutes M | --seconds S | --rounds N] "
                      "[--max-size BYTES] [--seed N] [--first-round N] [-v]\n");
    rrt_finalize();
    return 2;
  }
  gVerbose = o.verbose;

  // The communicators rounds run on; every rank is in exactly one part of each split.
  std::vector<rrt_comm_t> comms(4, RRT_COMM_NULL);
  comms[0] = RRT_COMM_WORLD;
  check(rrt_comm_dup(RRT_COMM_WORLD, &comms[1]), "comm_dup", 0);
  check(rrt_comm_split(RRT_COMM_WORLD, gWorldRank % 2, gWorldRank, &comms[2]), "comm_split", 0);
  check(rrt_comm_split(comms[1], gWorldRank % 3, -gWorldRank, &comms[3]), "comm_split", 0);

  const double t0 = rrt_wtime();
  for (uint64_t round = o.firstRound;; ++round) {
    // Rank 0 decides whether there is another round.
    int go = 1;
    if (gWorldRank == 0)
      go = o.rounds >= 0 ? round <= static_cast<uint64_t>(o.rounds)
                         : (rrt_wtime() - t0 < o.seconds || round == o.firstRound);
    check(rrt_bcast(&go, 1, RRT_INT32, 0, RRT_COMM_WORLD), "bcast(go)", round);
    if (!go) break;
    // Which communicator: drawn from (seed, round), the same on every rank.
    Rng pick(mix(o.seed, round));
    const rrt_comm_t comm = comms[pick.below(comms.size())];
    // The plan of a split part: its own generator (parts differ in size), the same on its members.
    int color = 0;
    if (comm == comms[2]) color = gWorldRank % 2;
    if (comm == comms[3]) color = gWorldRank % 3;
    Rng g(mix(mix(o.seed, round), static_cast<uint64_t>(color) + 17));
    p2pRound(comm, round, g, o);
    collRound(comm, round, g, o);
    ++gTotals.rounds;
    if (gVerbose && gWorldRank == 0 && round % 100 == 0)
      printf("round %" PRIu64 ": %.1f s\n", round, rrt_wtime() - t0);
  }
  const double secs = rrt_wtime() - t0;

  uint64_t mine[4] = {gTotals.messages, gTotals.bytes, gTotals.collectives, gTotals.mismatches};
  uint64_t all[4] = {0, 0, 0, 0};
  check(rrt_reduce(mine, all, 4, RRT_UINT64, RRT_SUM, 0, RRT_COMM_WORLD), "reduce(totals)", 0);
  for (size_t i = 1; i < comms.size(); ++i) rrt_comm_free(&comms[i]);
  if (gWorldRank == 0) {
    printf("rrt_stress: %d ranks, %" PRIu64 " rounds in %.1f s: %" PRIu64 " messages, %" PRIu64
           " bytes, %" PRIu64 " collectives (per rank, summed), %" PRIu64 " mismatches\n",
           size, gTotals.rounds, secs, all[0], all[1], all[2], all[3]);
    if (all[3] == 0) printf("PASS rrt_stress (%d ranks)\n", size);
    fflush(stdout);
  }
  int failedAny = all[3] != 0;
  check(rrt_bcast(&failedAny, 1, RRT_INT32, 0, RRT_COMM_WORLD), "bcast(result)", 0);
  rrt_finalize();
  return failedAny ? 1 : 0;
}
