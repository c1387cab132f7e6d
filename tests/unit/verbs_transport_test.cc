// The verbs transport between fork()ed processes over the software RDMA device (run through
// tests/softrdma/verbs_unit.sh, which puts the device's libibverbs.so.1 first): wire-up through
// hand-made Contexts (address blobs exchanged in shared memory), caps checked against what works,
// active messages of every size class (inline, bounce buffer, largest), credit exhaustion and
// recovery, RDMA READ / WRITE through registered memory and packed rkeys, and a bad rkey turned
// into a request error and a failed peer instead of a hang.
//
// Each test forks two ranks; a child reports failure through its exit status (printing why).
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/gpu/gpu.h"
#include "runtime/transport/verbs/address.h"
#include "runtime/transport/verbs/verbs_transport.h"
#include "tests/unit/gpu_fake_driver.h"

namespace rrt::transport::verbs {
namespace {

constexpr size_t kBlobMax = 4096;

struct Shared {
  std::atomic<int> barrier[16];
  uint32_t blobLen[2];
  uint8_t blob[2][kBlobMax];
  uint64_t addr[2];
  uint8_t rkey[2][kMaxRkeyBytes];
  uint32_t rkeyLen[2];
};
Shared* gShared = nullptr;

void barrier(int n) {
  gShared->barrier[n].fetch_add(1);
  while (gShared->barrier[n].load() < 2) usleep(100);
}

Status lookupShared(int peer, const std::string& key, std::vector<uint8_t>* out) {
  if (key != "rrt.verbs" || peer < 0 || peer > 1) return Status::ErrWireup;
  out->assign(gShared->blob[peer], gShared->blob[peer] + gShared->blobLen[peer]);
  return Status::Ok;
}

// What one rank saw.
struct Rank {
  int rank = 0;
  std::vector<std::vector<uint8_t>> got;  // active messages, in order
  std::vector<uint8_t> ids;
  int failedPeer = -1;
  Status failedWhy = Status::Ok;
};
Rank* gRank = nullptr;

void onAm(void*, int src, AmId id, const void* data, size_t len) {
  gRank->ids.push_back(id);
  gRank->got.emplace_back(static_cast<const uint8_t*>(data), static_cast<const uint8_t*>(data) + len);
}
void onFailed(void*, int peer, Status why) {
  gRank->failedPeer = peer;
  gRank->failedWhy = why;
}

#define CHILD_CHECK(cond, ...)                                       \
  do {                                                               \
    if (!(cond)) {                                                   \
      fprintf(stderr, "rank %d: %s:%d: ", gRank->rank, __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                                  \
      fputc('\n', stderr);                                           \
      _exit(1);                                                      \
    }                                                                \
  } while (0)

// The GPU of a rank when the test asks for one (runPair's fakeGpu): the driver double, whose
// device memory the software RDMA device reaches as a dma-buf.
gpu::test::FakeDriver* gFake = nullptr;

// Runs body(rank, transport) in two forked ranks after wire-up; env set before create.
void runPair(const std::vector<std::pair<const char*, const char*>>& env,
             const std::function<void(Rank&, Transport&)>& body, bool fakeGpu = false) {
  void* m = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(m, MAP_FAILED);
  gShared = new (m) Shared{};
  pid_t pids[2];
  for (int r = 0; r < 2; ++r) {
    pids[r] = fork();
    ASSERT_GE(pids[r], 0);
    if (pids[r] == 0) {
      for (auto& kv : env) setenv(kv.first, kv.second, 1);
      setenv("RRT_TRANSPORTS", "verbs", 1);
      config::reload();
      Rank me;
      me.rank = r;
      gRank = &me;
      Context ctx;
      ctx.rank = r;
      ctx.size = 2;
      ctx.localPeers = {0, 1};
      ctx.nodeOf = {0, 0};
      ctx.jobId = "verbs-test";
      ctx.amHandler = &onAm;
      ctx.peerFailed = &onFailed;
      ctx.lookup = &lookupShared;
      if (fakeGpu) {
        gFake = new gpu::test::FakeDriver;
        gpu::installDriver(gFake);  // before create: the transport asks gpu::enabled()
      }
      Status st;
      TransportPtr t = create(ctx, &st);
      CHILD_CHECK(t, "create: %s (is the software RDMA device on LD_LIBRARY_PATH?)", statusName(st));
      std::vector<uint8_t> blob;
      CHILD_CHECK(t->address(&blob) == Status::Ok && blob.size() <= kBlobMax, "address");
      memcpy(gShared->blob[r], blob.data(), blob.size());
      gShared->blobLen[r] = static_cast<uint32_t>(blob.size());
      barrier(0);
      CHILD_CHECK(t->start() == Status::Ok, "start");
      const int peer = 1 - r;
      CHILD_CHECK(t->reachable(peer) && !t->reachable(r), "reachable");
      CHILD_CHECK(t->connect(peer, gShared->blob[peer], gShared->blobLen[peer]) == Status::Ok,
                  "connect");
      CHILD_CHECK(t->connect(peer, gShared->blob[peer], 3) != Status::Ok, "short blob accepted");
      barrier(1);  // both QPs at RTS
      body(me, *t);
      barrier(15);
      _exit(0);
    }
  }
  bool reaped[2] = {false, false};
  for (int left = 2; left > 0; --left) {
    int status = 0;
    pid_t pid;
    do pid = waitpid(-1, &status, 0);
    while (pid > 0 && pid != pids[0] && pid != pids[1]);
    ASSERT_GT(pid, 0);
    const int r = pid == pids[0] ? 0 : 1;
    reaped[r] = true;
    const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
    EXPECT_TRUE(ok) << "rank " << r << " failed";
    // A rank that failed leaves its peer waiting for it (barrier, progressUntil): end the peer.
    if (!ok && !reaped[1 - r]) kill(pids[1 - r], SIGKILL);
  }
  munmap(m, sizeof(Shared));
}

void progressUntil(Transport& t, const std::function<bool()>& done) {
  for (long i = 0; !done(); ++i) {
    t.progress();
    CHILD_CHECK(i < 200000000, "no progress");
  }
}

std::vector<uint8_t> pattern(size_t n, int salt) {
  std::vector<uint8_t> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<uint8_t>(i * 7 + salt);
  return v;
}

TEST(VerbsTransport, CapsAndActiveMessagesOfEverySize) {
  runPair({}, [](Rank& me, Transport& t) {
    const Caps& c = t.caps();
    CHILD_CHECK((c.flags & (kAmBcopy | kGetZcopy | kPutZcopy | kOrdered | kNeedsReg |
                            kPutDelivered)) ==
                    (kAmBcopy | kGetZcopy | kPutZcopy | kOrdered | kNeedsReg | kPutDelivered),
                "caps flags %x", c.flags);
    CHILD_CHECK((c.flags & kEventFd) && t.eventFd() >= 0, "no completion channel fd");
    CHILD_CHECK(c.maxAm >= 1024 && c.eagerDefault <= c.maxAm && c.maxZcopy >= 4096, "limits");
    const size_t sizes[] = {0, 1, 8, 100, 250, 1000, 4000, c.maxAm - 16};
    const int n = sizeof sizes / sizeof sizes[0];
    if (me.rank == 0) {
      for (int i = 0; i < n; ++i) {
        auto p = pattern(sizes[i], i);
        uint8_t hdr[16];
        memset(hdr, i, sizeof hdr);
        Status st;
        while ((st = t.amSend(1, static_cast<AmId>(10 + i), hdr, sizeof hdr, p.data(), p.size())) ==
               Status::NoResource)
          t.progress();
        CHILD_CHECK(st == Status::Ok, "amSend %zu: %s", sizes[i], statusName(st));
      }
      CHILD_CHECK(t.amSend(1, 5, nullptr, 0, nullptr, c.maxAm + 1) == Status::ErrArg,
                  "oversized AM accepted");
      progressUntil(t, [&] { return me.got.size() == 1; });  // the echo
    } else {
      progressUntil(t, [&] { return me.got.size() == static_cast<size_t>(n); });
      for (int i = 0; i < n; ++i) {
        CHILD_CHECK(me.ids[i] == 10 + i, "AM %d has id %d: out of order", i, me.ids[i]);
        auto p = pattern(sizes[i], i);
        CHILD_CHECK(me.got[i].size() == 16 + sizes[i], "AM %d: %zu bytes", i, me.got[i].size());
        CHILD_CHECK(p.empty() || memcmp(me.got[i].data() + 16, p.data(), p.size()) == 0,
                    "AM %d corrupt", i);
      }
      CHILD_CHECK(t.amSend(0, 9, "x", 1, nullptr, 0) == Status::Ok, "echo");
      for (int i = 0; i < 1000; ++i) t.progress();
    }
  });
}

// The responder's RNR NAK count of the software device (0 when not running on it: the caller
// checks it is).
unsigned long long rnrNaksSent(bool* have) {
  using Fn = unsigned long long (*)();
  auto fn = reinterpret_cast<Fn>(dlsym(RTLD_DEFAULT, "softrdma_rnr_naks_sent"));
  *have = fn != nullptr;
  return fn ? fn() : 0;
}

TEST(VerbsTransport, CreditsRunOutAndComeBack) {
  // 2 credits per class (auto classes: 1K and 8K+64): two small sends, then two more that
  // spill into the large class, then the fifth to a peer that does not poll must wait; once it
  // polls, credits return (explicitly: rank 1 sends nothing) and every message arrives, in
  // order, though they travelled on two QPs. No SEND ever met an empty SRQ (no RNR NAK).
  runPair({{"RRT_IB_CREDITS", "2"}}, [](Rank& me, Transport& t) {
    const int total = 200;
    if (me.rank == 0) {
      int sent = 0, noResource = 0;
      while (sent < 4) CHILD_CHECK(t.amSend(1, 7, &sent, sizeof sent, nullptr, 0) == Status::Ok && ++sent, "send");
      CHILD_CHECK(t.amSend(1, 7, &sent, sizeof sent, nullptr, 0) == Status::NoResource,
                  "a fifth send went out with 2 credits in each of 2 classes");
      barrier(2);  // rank 1 starts polling
      while (sent < total) {
        Status st = t.amSend(1, 7, &sent, sizeof sent, nullptr, 0);
        if (st == Status::Ok) ++sent;
        else if (st == Status::NoResource) { ++noResource; t.progress(); }
        else CHILD_CHECK(false, "amSend: %s", statusName(st));
      }
      progressUntil(t, [&] { return me.got.size() == 1; });
    } else {
      barrier(2);
      progressUntil(t, [&] { return me.got.size() == static_cast<size_t>(total); });
      for (int i = 0; i < total; ++i) {
        int v;
        memcpy(&v, me.got[i].data(), sizeof v);
        CHILD_CHECK(v == i, "message %d carries %d", i, v);
      }
      CHILD_CHECK(t.amSend(0, 8, nullptr, 0, nullptr, 0) == Status::Ok, "done message");
      for (int i = 0; i < 1000; ++i) t.progress();
      bool have = false;
      const unsigned long long naks = rnrNaksSent(&have);
      CHILD_CHECK(have, "not on the software RDMA device");
      CHILD_CHECK(naks == 0, "%llu RNR NAKs: a SEND met an empty SRQ", naks);
    }
  });
}

// Three classes (256, 2K, 8K+64 bytes), 2 credits each, a receiver that does not poll: the
// messages that fill each class exactly, and one byte more, go where the selection says, a
// message spills into a larger class only when its own is out of credits, and every class
// that fits being empty means NoResource. Then all arrive intact and in sending order (they
// came on three QPs), and no SEND met an empty SRQ.
TEST(VerbsTransport, EagerClassBoundariesAndSpill) {
  runPair({{"RRT_IB_EAGER_CLASSES", "256,2K,8256"}, {"RRT_IB_CREDITS", "2"}},
          [](Rank& me, Transport& t) {
    const size_t H = 8 + 16;  // transport header + our 16-byte AM header
    CHILD_CHECK(t.caps().maxAm == 8256 - 8, "maxAm %zu", t.caps().maxAm);
    CHILD_CHECK(t.describe().find("eager_classes=[") != std::string::npos &&
                    t.describe().find("x 256B credits=2") != std::string::npos &&
                    t.describe().find("bounce_memory=") != std::string::npos,
                "describe: %s", t.describe().c_str());
    // (bytes on the wire: 8 + 16 + payload, at least 24; expected to go out now)
    const struct { size_t total; bool ok; } plan[] = {
        {256, true},    // class 0
        {256, true},    // class 0, now out of credits
        {8, true},      // spills into class 1
        {2049, true},   // class 2
        {2049, true},   // class 2, now out
        {2049, false},  // class 2 empty, nothing larger
        {2048, true},   // class 1, now out
        {257, false},   // classes 1 and 2 empty
        {8, false},     // every class empty
        {8256, false},  // the largest message: class 2 empty
    };
    const int n = sizeof plan / sizeof plan[0];
    std::vector<int> sentIdx;
    if (me.rank == 0) {
      for (int i = 0; i < n; ++i) {
        const size_t payload = plan[i].total >= H ? plan[i].total - H : 0;
        auto p = pattern(payload, i);
        uint8_t hdr[16];
        memset(hdr, i, sizeof hdr);
        Status st = t.amSend(1, static_cast<AmId>(20 + i), hdr, sizeof hdr, p.data(), p.size());
        CHILD_CHECK(st == (plan[i].ok ? Status::Ok : Status::NoResource),
                    "step %d (%zu bytes): %s", i, plan[i].total, statusName(st));
      }
      CHILD_CHECK(t.amSend(1, 5, nullptr, 0, nullptr, t.caps().maxAm + 1) == Status::ErrArg,
                  "oversized AM accepted");
      barrier(2);  // rank 1 polls now
      // The refused ones go out once credits come back; then the largest possible one.
      for (int i = 0; i < n; ++i) {
        if (plan[i].ok) continue;
        const size_t payload = plan[i].total >= H ? plan[i].total - H : 0;
        auto p = pattern(payload, i);
        uint8_t hdr[16];
        memset(hdr, i, sizeof hdr);
        Status st;
        while ((st = t.amSend(1, static_cast<AmId>(20 + i), hdr, sizeof hdr, p.data(),
                              p.size())) == Status::NoResource)
          t.progress();
        CHILD_CHECK(st == Status::Ok, "resend %d: %s", i, statusName(st));
      }
      progressUntil(t, [&] { return me.got.size() == 1; });
    } else {
      barrier(2);
      progressUntil(t, [&] { return me.got.size() == static_cast<size_t>(n); });
      int k = 0;
      for (int pass = 0; pass < 2; ++pass)
        for (int i = 0; i < n; ++i, ++k) {
          if (plan[i].ok != (pass == 0)) { --k; continue; }
          CHILD_CHECK(me.ids[k] == 20 + i, "message %d is id %d, want %d: out of order", k,
                      me.ids[k], 20 + i);
          const size_t payload = plan[i].total >= H ? plan[i].total - H : 0;
          auto p = pattern(payload, i);
          CHILD_CHECK(me.got[k].size() == 16 + payload, "message %d: %zu bytes", k, me.got[k].size());
          CHILD_CHECK(p.empty() || memcmp(me.got[k].data() + 16, p.data(), p.size()) == 0,
                      "message %d corrupt", k);
        }
      CHILD_CHECK(t.amSend(0, 9, nullptr, 0, nullptr, 0) == Status::Ok, "done");
      for (int i = 0; i < 1000; ++i) t.progress();
      bool have = false;
      const unsigned long long naks = rnrNaksSent(&have);
      CHILD_CHECK(have && naks == 0, "RNR NAKs: %llu (device found: %d)", naks, have);
    }
  });
}

// The completion channel: armed with nothing pending, the fd stays quiet; a SEND from the peer
// makes it readable; progress() delivers the message and reads the event, so the fd is quiet
// again; with a message already in the CQ, arming says "do not sleep". RRT_IB_COMP_CHANNEL=off:
// no event fd.
TEST(VerbsTransport, CompletionChannelWakesASleeper) {
  runPair({}, [](Rank& me, Transport& t) {
    const int fd = t.eventFd();
    CHILD_CHECK(fd >= 0, "no event fd");
    if (me.rank == 1) {
      CHILD_CHECK(t.armEventFd(), "armed with nothing pending but told not to sleep");
      pollfd p{fd, POLLIN, 0};
      CHILD_CHECK(poll(&p, 1, 0) == 0, "fd readable with nothing sent");
      barrier(2);  // rank 0 sends now
      CHILD_CHECK(poll(&p, 1, 30000) == 1, "the SEND did not wake the channel");
      t.progress();
      CHILD_CHECK(me.got.size() == 1, "woken, but progress() found %zu messages", me.got.size());
      p.revents = 0;
      CHILD_CHECK(poll(&p, 1, 0) == 0, "fd still readable after progress()");
      barrier(3);  // rank 0 sends again while we do not poll
      barrier(4);
      bool sawWork = false;
      for (long i = 0; i < 100000000 && !sawWork; ++i) sawWork = !t.armEventFd();
      CHILD_CHECK(sawWork && me.got.size() == 2, "arming never saw the second message");
      CHILD_CHECK(t.amSend(0, 9, nullptr, 0, nullptr, 0) == Status::Ok, "done");
      for (int i = 0; i < 1000; ++i) t.progress();
    } else {
      barrier(2);
      CHILD_CHECK(t.amSend(1, 7, "a", 1, nullptr, 0) == Status::Ok, "send 1");
      for (int i = 0; i < 1000; ++i) t.progress();
      barrier(3);
      CHILD_CHECK(t.amSend(1, 7, "b", 1, nullptr, 0) == Status::Ok, "send 2");
      barrier(4);
      progressUntil(t, [&] { return me.got.size() == 1; });
    }
  });
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    setenv("RRT_IB_COMP_CHANNEL", "off", 1);
    setenv("RRT_TRANSPORTS", "verbs", 1);
    config::reload();
    Context ctx;
    ctx.rank = 0;
    ctx.size = 2;
    ctx.localPeers = {0, 1};
    ctx.nodeOf = {0, 0};
    ctx.jobId = "verbs-test";
    Status st;
    TransportPtr t = create(ctx, &st);
    _exit(t && !(t->caps().flags & kEventFd) && t->eventFd() < 0 && !t->armEventFd() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "RRT_IB_COMP_CHANNEL=off";
}

struct Done : Completion {
  int fired = 0;
  Status last = Status::Ok;
};
void onDone(Completion* c, Status s) {
  auto* d = static_cast<Done*>(c);
  ++d->fired;
  d->last = s;
}

TEST(VerbsTransport, GetAndPutThroughRegisteredMemory) {
  runPair({{"RRT_IB_MAX_ZCOPY", "64K"}}, [](Rank& me, Transport& t) {
    const size_t n = size_t{1} << 20;
    std::vector<uint8_t> buf = pattern(n, me.rank + 1);
    MemHandle* mh = nullptr;
    CHILD_CHECK(t.memReg(buf.data(), n, MemType::Host, &mh) == Status::Ok && mh, "memReg");
    MemHandle* cuda = nullptr;
    CHILD_CHECK(t.memReg(buf.data(), n, MemType::Cuda, &cuda) == Status::ErrUnsupported && !cuda,
                "cuda reg");
    gShared->addr[me.rank] = reinterpret_cast<uint64_t>(buf.data());
    gShared->rkeyLen[me.rank] = static_cast<uint32_t>(t.rkeyPack(mh, gShared->rkey[me.rank]));
    CHILD_CHECK(gShared->rkeyLen[me.rank] > 0 && gShared->rkeyLen[me.rank] <= kMaxRkeyBytes, "rkey");
    barrier(2);
    const int peer = 1 - me.rank;
    std::vector<uint8_t> local(n, 0);
    MemHandle* lmh = nullptr;
    CHILD_CHECK(t.memReg(local.data(), n, MemType::Host, &lmh) == Status::Ok, "memReg local");
    if (me.rank == 0) {
      // READ the peer's buffer in maxZcopy chunks, many in flight.
      Done d;
      d.fn = &onDone;
      const size_t chunk = t.caps().maxZcopy;
      CHILD_CHECK(chunk == 65536, "maxZcopy %zu", chunk);
      int issued = 0;
      for (size_t off = 0; off < n;) {
        Status st = t.get(peer, local.data() + off, chunk, lmh, gShared->addr[peer] + off,
                          gShared->rkey[peer], gShared->rkeyLen[peer], &d);
        if (st == Status::NoResource) { t.progress(); continue; }
        CHILD_CHECK(st == Status::InProgress, "get: %s", statusName(st));
        off += chunk;
        ++issued;
      }
      progressUntil(t, [&] { return d.fired == issued; });
      CHILD_CHECK(d.last == Status::Ok && local == pattern(n, peer + 1), "READ data wrong");
      CHILD_CHECK(t.get(peer, local.data(), chunk + 1, lmh, gShared->addr[peer], gShared->rkey[peer],
                        gShared->rkeyLen[peer], &d) == Status::ErrArg, "oversized get accepted");
      // WRITE our pattern into the peer's buffer, then tell it.
      Done w;
      w.fn = &onDone;
      issued = 0;
      for (size_t off = 0; off < n;) {
        Status st = t.put(peer, buf.data() + off, chunk, mh, gShared->addr[peer] + off,
                          gShared->rkey[peer], gShared->rkeyLen[peer], &w);
        if (st == Status::NoResource) { t.progress(); continue; }
        CHILD_CHECK(st == Status::InProgress, "put: %s", statusName(st));
        off += chunk;
        ++issued;
      }
      progressUntil(t, [&] { return w.fired == issued; });
      CHILD_CHECK(w.last == Status::Ok, "put failed");
      while (t.amSend(peer, 3, nullptr, 0, nullptr, 0) == Status::NoResource) t.progress();
      progressUntil(t, [&] { return me.got.size() == 1; });
    } else {
      progressUntil(t, [&] { return me.got.size() == 1; });
      CHILD_CHECK(buf == pattern(n, 1), "WRITE data wrong");
      CHILD_CHECK(t.amSend(peer, 4, nullptr, 0, nullptr, 0) == Status::Ok, "ack");
      for (int i = 0; i < 1000; ++i) t.progress();
    }
    t.memDereg(lmh);
    t.memDereg(mh);
  });
}

// Moves n bytes with get (op 0) or put (op 1) in maxZcopy chunks, waiting for all.
void rdmaAll(Transport& t, int op, int peer, void* local, size_t n, MemHandle* lmh) {
  Done d;
  d.fn = &onDone;
  const size_t chunk = t.caps().maxZcopy;
  int issued = 0;
  for (size_t off = 0; off < n;) {
    const size_t len = std::min(chunk, n - off);
    char* l = static_cast<char*>(local) + off;
    const uint64_t remote = gShared->addr[peer] + off;
    Status st = op == 0 ? t.get(peer, l, len, lmh, remote, gShared->rkey[peer],
                                gShared->rkeyLen[peer], &d)
                        : t.put(peer, l, len, lmh, remote, gShared->rkey[peer],
                                gShared->rkeyLen[peer], &d);
    if (st == Status::NoResource) {
      t.progress();
      continue;
    }
    CHILD_CHECK(st == Status::InProgress, "%s: %s", op ? "put" : "get", statusName(st));
    off += len;
    ++issued;
  }
  progressUntil(t, [&] { return d.fired == issued; });
  CHILD_CHECK(d.last == Status::Ok, "%s failed: %s", op ? "put" : "get", statusName(d.last));
}

void shareRegion(int rank, void* addr, Transport& t, MemHandle* mh) {
  gShared->addr[rank] = reinterpret_cast<uint64_t>(addr);
  gShared->rkeyLen[rank] = static_cast<uint32_t>(t.rkeyPack(mh, gShared->rkey[rank]));
  CHILD_CHECK(gShared->rkeyLen[rank] > 0, "rkey");
}

std::vector<uint8_t> devBytes(const void* dev, size_t n) {
  std::vector<uint8_t> v(n);
  gFake->devRead(v.data(), dev, n);
  return v;
}

// GPUDirect RDMA: device memory (the driver double's, which the CPU cannot touch) registered
// through its dma-buf, read and written by the peer zero-copy, device to device; the whole
// allocation is registered once and reused; an allocation freed and made again at the same
// address is registered anew, so the peer reads the new bytes, never the old pages.
TEST(VerbsTransport, GpuMemoryThroughDmabuf) {
  runPair({{"RRT_IB_MAX_ZCOPY", "256K"}}, [](Rank& me, Transport& t) {
    const int peer = 1 - me.rank;
    CHILD_CHECK(t.caps().zcopyMemTypes & memory::memTypeBit(MemType::Cuda), "no Cuda zero-copy");
    CHILD_CHECK(t.describe().find("gdr=auto") != std::string::npos, "%s", t.describe().c_str());
    const size_t n = (size_t{1} << 20) + 100;
    void* dev = gFake->devAlloc(n);
    gFake->devWrite(dev, pattern(n, me.rank + 1).data(), n);
    MemHandle* mh = nullptr;
    CHILD_CHECK(t.memReg(dev, n, MemType::Cuda, &mh) == Status::Ok && mh, "memReg device");
    CHILD_CHECK(t.describe().find("gdr=dmabuf") != std::string::npos, "%s", t.describe().c_str());
    std::vector<uint8_t> host(64);
    MemHandle* wrong = nullptr;
    CHILD_CHECK(t.memReg(host.data(), host.size(), MemType::Cuda, &wrong) == Status::ErrArg &&
                    !wrong, "host memory registered as device memory");
    CHILD_CHECK(t.caps().zcopyMemTypes & memory::memTypeBit(MemType::Cuda), "bad input turned GDR off");
    shareRegion(me.rank, dev, t, mh);
    barrier(2);
    void* mine = gFake->devAlloc(n);
    MemHandle* lmh = nullptr;
    CHILD_CHECK(t.memReg(mine, n, MemType::Cuda, &lmh) == Status::Ok, "memReg local device");
    if (me.rank == 0) {
      rdmaAll(t, 0, peer, mine, n, lmh);  // READ: peer's device memory -> ours
      CHILD_CHECK(devBytes(mine, n) == pattern(n, peer + 1), "READ into device memory wrong");
      gFake->devWrite(mine, pattern(n, 5).data(), n);
      rdmaAll(t, 1, peer, mine, n, lmh);  // WRITE: ours -> peer's device memory
    }
    barrier(3);
    if (me.rank == 1) CHILD_CHECK(devBytes(dev, n) == pattern(n, 5), "WRITE into device memory wrong");
    // Registered again: the cached registration of the same allocation, no new export.
    const uint64_t exports = gFake->dmabufExports;
    MemHandle* again = nullptr;
    CHILD_CHECK(t.memReg(static_cast<char*>(mine) + 4096, 8192, MemType::Cuda, &again) == Status::Ok &&
                    again == lmh && gFake->dmabufExports == exports, "no cache hit");
    t.memDereg(again);
    barrier(4);
    if (me.rank == 1) {
      // Free and allocate again at the same address, with other bytes.
      t.memDereg(mh);
      gFake->devFree(dev);
      CHILD_CHECK(gFake->devAllocAt(dev, n) == dev, "devAllocAt");
      gFake->devWrite(dev, pattern(n, 9).data(), n);
      CHILD_CHECK(t.memReg(dev, n, MemType::Cuda, &mh) == Status::Ok, "memReg after realloc");
      CHILD_CHECK(gFake->dmabufExports == exports + 1, "the new allocation was not registered anew");
      shareRegion(me.rank, dev, t, mh);
    }
    barrier(5);
    if (me.rank == 0) {
      rdmaAll(t, 0, peer, mine, n, lmh);
      CHILD_CHECK(devBytes(mine, n) == pattern(n, 9), "stale device pages read");
    }
    barrier(6);
    t.memDereg(lmh);
    t.memDereg(mh);
  }, /*fakeGpu=*/true);
}

// RRT_IB_GDR=off never registers device memory; auto turns itself off at the first refusal
// (here: a driver that cannot export, and ibv_reg_mr on device memory fails as without
// nvidia-peermem), and the capability goes with it, so the protocol pipelines instead.
TEST(VerbsTransport, GpuMemoryRefusedOrOff) {
  runPair({{"RRT_IB_GDR", "off"}}, [](Rank& me, Transport& t) {
    CHILD_CHECK(!(t.caps().zcopyMemTypes & memory::memTypeBit(MemType::Cuda)), "Cuda with GDR off");
    void* dev = gFake->devAlloc(4096);
    MemHandle* mh = nullptr;
    CHILD_CHECK(t.memReg(dev, 4096, MemType::Cuda, &mh) == Status::ErrUnsupported && !mh, "reg");
    CHILD_CHECK(gFake->dmabufExports == 0, "exported with GDR off");
  }, /*fakeGpu=*/true);
  runPair({}, [](Rank& me, Transport& t) {
    gFake->dmabufExport = false;
    CHILD_CHECK(t.caps().zcopyMemTypes & memory::memTypeBit(MemType::Cuda), "auto: no Cuda");
    void* dev = gFake->devAlloc(4096);
    MemHandle* mh = nullptr;
    CHILD_CHECK(t.memReg(dev, 4096, MemType::Cuda, &mh) == Status::ErrUnsupported && !mh, "reg");
    CHILD_CHECK(!(t.caps().zcopyMemTypes & memory::memTypeBit(MemType::Cuda)), "still Cuda");
    CHILD_CHECK(t.describe().find("gdr=off (device memory registration refused") != std::string::npos,
                "%s", t.describe().c_str());
  }, /*fakeGpu=*/true);
  runPair({}, [](Rank& me, Transport& t) {  // no GPU: nothing to register
    CHILD_CHECK(!(t.caps().zcopyMemTypes & memory::memTypeBit(MemType::Cuda)), "Cuda without GPU");
    CHILD_CHECK(t.describe().find("gdr=off") != std::string::npos, "%s", t.describe().c_str());
  });
}

TEST(VerbsTransport, BadRkeyFailsTheRequestAndThePeer) {
  runPair({}, [](Rank& me, Transport& t) {
    std::vector<uint8_t> local(4096);
    MemHandle* lmh = nullptr;
    CHILD_CHECK(t.memReg(local.data(), local.size(), MemType::Host, &lmh) == Status::Ok, "memReg");
    if (me.rank == 0) {
      Done d;
      d.fn = &onDone;
      uint32_t bogus = 0xdeadbeef;
      CHILD_CHECK(t.get(1, local.data(), 4096, lmh, 0x1000, &bogus, sizeof bogus, &d) ==
                      Status::InProgress, "get");
      progressUntil(t, [&] { return d.fired == 1; });
      CHILD_CHECK(d.last != Status::Ok, "a bad rkey completed without error");
      CHILD_CHECK(me.failedPeer == 1, "peer not reported failed");
      CHILD_CHECK(t.amSend(1, 3, nullptr, 0, nullptr, 0) == Status::ErrProcFailed,
                  "send to a failed peer accepted");
    }
    t.memDereg(lmh);
  });
}

// RRT_VERBS_CM on the software device, which has no kernel rdma_cm: "rdmacm" makes create() fail
// with ErrUnsupported (the transport is then not used; nothing hangs or crashes), "auto" falls
// back to the PMIx exchange (describe() says cm=pmix) and a blob made that way says so.
TEST(VerbsTransport, ConnectionManagerChoiceWithoutKernelRdmaCm) {
  pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    Rank me;
    gRank = &me;
    Context ctx;
    ctx.rank = 0;
    ctx.size = 2;
    ctx.localPeers = {0, 1};
    ctx.nodeOf = {0, 0};
    ctx.jobId = "verbs-cm-test";
    setenv("RRT_TRANSPORTS", "verbs", 1);
    setenv("RRT_VERBS_CM", "rdmacm", 1);
    config::reload();
    Status st = Status::Ok;
    TransportPtr t = create(ctx, &st);
    CHILD_CHECK(!t && st == Status::ErrUnsupported, "RRT_VERBS_CM=rdmacm: %s",
                t ? "created" : statusName(st));
    for (const char* v : {"auto", "pmix"}) {
      setenv("RRT_VERBS_CM", v, 1);
      config::reload();
      t = create(ctx, &st);
      CHILD_CHECK(t != nullptr, "RRT_VERBS_CM=%s: %s", v, statusName(st));
      CHILD_CHECK(t->describe().find("cm=pmix") != std::string::npos, "RRT_VERBS_CM=%s: %s", v,
                  t->describe().c_str());
      std::vector<uint8_t> blob;
      CHILD_CHECK(t->address(&blob) == Status::Ok && blob.size() > sizeof(AddressHeader) &&
                      blob[offsetof(AddressHeader, cm)] == static_cast<uint8_t>(CmKind::Pmix),
                  "blob of RRT_VERBS_CM=%s does not say pmix", v);
    }
    _exit(0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

}  // namespace
}  // namespace rrt::transport::verbs
