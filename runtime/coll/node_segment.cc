// The communicator's shared-memory segment: creation and attachment over the call's messages,
// and the counter wait. See node_segment.h.
#include "runtime/coll/node_segment.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <string>

#include "runtime/coll/direct.h"
#include "runtime/coll/selection.h"
#include "runtime/core/log.h"
#include "runtime/core/process.h"
#include "runtime/core/progress.h"
#include "runtime/memory/peer_map.h"

namespace rrt::coll {
namespace {

constexpr uint64_t kMagic = 0x7272742d636f6c31ull;  // "rrt-col1"
constexpr size_t kLine = 64;
constexpr size_t kPage = 4096;
constexpr double kLivenessSeconds = 0.01;

// Line 0: the header; then per rank one line with its pid and probe and one per counter; then
// per rank one line per slot buffer with the call's shared buffers; then the slots.
struct Header {
  uint64_t magic;
  uint64_t slotBytes;
  uint32_t size;
};
static_assert(sizeof(Header) <= kLine, "the header is one line");

struct RankLine {
  int32_t pid;
  int32_t probeFd;  // memory::probeFd() of the rank: rank 0 tries it at open
  uint64_t probeIno;
  std::atomic<int32_t> failed;  // markFailed()
};
static_assert(sizeof(NodeSegment::CallBuffers) <= kLine, "a call's buffers are one line");

constexpr size_t kLinesPerRank = 1 + NodeSegment::kCounters;
size_t controlBytes(int size) {
  return kLine * (1 + (kLinesPerRank + NodeSegment::kBuffers) * static_cast<size_t>(size));
}
size_t slotsOffset(int size) { return (controlBytes(size) + kPage - 1) / kPage * kPage; }
char* rankLines(char* base, int r) { return base + kLine * (1 + kLinesPerRank * static_cast<size_t>(r)); }
RankLine* rankLine(char* base, int r) { return reinterpret_cast<RankLine*>(rankLines(base, r)); }
int32_t* pidOf(char* base, int r) { return &rankLine(base, r)->pid; }

// Rank 0's offer: the name to map, or why there is none.
struct Offer {
  int32_t status;
  uint32_t pad;
  uint64_t bytes;
  char name[80];
};

std::string newName(const Direct& d) {
  static unsigned made = 0;  // segments this process created: names stay unique
  const P2p& p = p2p();
  const std::string job = p.jobId ? p.jobId() : "local" + std::to_string(getpid());
  return "/rrt-" + job + "-c" + std::to_string(d.comm().worldRank(0)) + "-" +
         std::to_string(made++);
}

// Maps name (created when create), bytes long: the mapping, or nullptr with a warning.
char* mapSegment(const char* name, size_t bytes, bool create) {
  const int fd = create ? shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600) : shm_open(name, O_RDWR, 0);
  if (fd < 0) {
    RRT_WARN("coll: shm_open(%s) failed: %s", name, strerror(errno));
    return nullptr;
  }
  bool sized = true;
  if (create) {
    const int e = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
    if (e != 0) RRT_WARN("coll: cannot size %s to %zu bytes: %s", name, bytes, strerror(e));
    sized = e == 0;
  } else {
    struct stat st;
    sized = fstat(fd, &st) == 0 && static_cast<size_t>(st.st_size) == bytes;
    if (!sized) RRT_WARN("coll: %s is not the size offered", name);
  }
  void* p = sized ? mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0) : MAP_FAILED;
  if (sized && p == MAP_FAILED) RRT_WARN("coll: mmap of %s failed: %s", name, strerror(errno));
  close(fd);
  if (create && p == MAP_FAILED) shm_unlink(name);
  return p == MAP_FAILED ? nullptr : static_cast<char*>(p);
}

}  // namespace

Status NodeSegment::open(Direct& d, size_t slotBytes, std::unique_ptr<NodeSegment>* out) {
  out->reset();
  const int p = d.size(), me = d.rank();
  slotBytes = (slotBytes + kPage - 1) / kPage * kPage;
  const size_t bytes = slotsOffset(p) + slotBytes * static_cast<size_t>(p);
  Offer offer{};
  char* base = nullptr;
  std::string name;
  if (me == 0) {
    name = newName(d);
    offer.bytes = bytes;
    snprintf(offer.name, sizeof offer.name, "%s", name.c_str());
    base = name.size() < sizeof offer.name ? mapSegment(offer.name, bytes, true) : nullptr;
    offer.status = static_cast<int32_t>(base ? Status::Ok : Status::ErrNoMemory);
    if (base) {
      Header h{kMagic, slotBytes, static_cast<uint32_t>(p)};
      std::memcpy(base, &h, sizeof h);  // posix_fallocate zeroed the rest: every counter is 0
    }
    for (int r = 1; r < p; ++r) RRT_TRY(d.send(r, &offer, sizeof offer));
  } else {
    RRT_TRY(d.recv(0, &offer, sizeof offer));
  }
  Status s = d.wait();
  if (s != Status::Ok) {
    if (base) {
      munmap(base, bytes);
      shm_unlink(offer.name);
    }
    return s;
  }
  if (me != 0 && offer.status == static_cast<int32_t>(Status::Ok)) {
    offer.name[sizeof offer.name - 1] = '\0';
    base = offer.bytes == bytes ? mapSegment(offer.name, bytes, false) : nullptr;
    Header h;
    if (base) std::memcpy(&h, base, sizeof h);
    if (base && (h.magic != kMagic || h.slotBytes != slotBytes || h.size != static_cast<uint32_t>(p))) {
      RRT_WARN("coll: %s is not the segment this communicator agreed on", offer.name);
      munmap(base, bytes);
      base = nullptr;
    }
  }
  if (base) {
    RankLine* line = rankLine(base, me);
    line->pid = static_cast<int32_t>(getpid());
    line->probeFd = memory::probeFd(&line->probeIno);
  }

  // Answers to rank 0, then rank 0's verdict: all or nobody uses it (bit 0), and whether ranks
  // may map each other's rrt_alloc_mem memory (bit 1). Rank 0 tries every rank's probe: the
  // access check (same user, ptrace read access, the process dumpable) passes for every pair
  // when it passes from rank 0 to each.
  int32_t mine = base ? 1 : 0, verdict = mine;
  std::vector<int32_t> answers(static_cast<size_t>(p), 0);
  if (me == 0) {
    for (int r = 1; r < p; ++r) RRT_TRY(d.recv(r, &answers[static_cast<size_t>(r)], sizeof(int32_t)));
    s = d.wait();
    if (base) shm_unlink(offer.name);  // every rank mapped it or never will
    if (s == Status::Ok) {
      for (int r = 1; r < p; ++r) verdict &= answers[static_cast<size_t>(r)];
      bool mappable = verdict && rankLine(base, 0)->probeFd >= 0;
      for (int r = 1; r < p && mappable; ++r) {
        const RankLine* line = rankLine(base, r);
        mappable = memory::peerMappable(line->pid, line->probeFd, line->probeIno);
      }
      if (verdict && !mappable)
        RRT_DEBUG("coll: communicator %d: ranks cannot map each other's rrt_alloc_mem memory",
                  d.comm().handle);
      if (mappable) verdict |= 2;
      for (int r = 1; r < p; ++r) RRT_TRY(d.send(r, &verdict, sizeof verdict));
      s = d.wait();
    }
  } else {
    RRT_TRY(d.send(0, &mine, sizeof mine));
    RRT_TRY(d.recv(0, &verdict, sizeof verdict));
    s = d.wait();
  }
  if (s != Status::Ok || !(verdict & 1)) {
    if (base) munmap(base, bytes);
    if (s == Status::Ok && me == 0)
      RRT_WARN("coll: no shared segment for communicator %d: the shared-memory algorithms fall "
               "back to point-to-point ones on it", d.comm().handle);
    return s;
  }
  std::unique_ptr<NodeSegment> seg(new NodeSegment());
  seg->base_ = base;
  seg->bytes_ = bytes;
  seg->slots_ = base + slotsOffset(p);
  seg->slotBytes_ = slotBytes;
  seg->bufferBytes_ = slotBytes / kBuffers / 64 * 64;
  seg->rank_ = me;
  seg->size_ = p;
  seg->peersMap_ = (verdict & 2) != 0;
  seg->peerAddresses_.assign(2 * static_cast<size_t>(p), nullptr);
  for (int r = 0; r < p; ++r) seg->worldRanks_.push_back(d.comm().worldRank(r));
  *out = std::move(seg);
  return Status::Ok;
}

size_t NodeSegment::slotBytesFor(int p) {
  const size_t slot = std::min(shmSlotBytes(), kMaxSegmentBytes / static_cast<size_t>(p));
  return std::max<size_t>(kPage, slot / kPage * kPage);
}

NodeSegment::~NodeSegment() {
  if (base_) munmap(base_, bytes_);
}

std::atomic<uint64_t>& NodeSegment::counter(int r, int c) const {
  char* line = rankLines(base_, r) + kLine * (1 + static_cast<size_t>(c));
  return *reinterpret_cast<std::atomic<uint64_t>*>(line);
}

NodeSegment::CallBuffers& NodeSegment::callBuffers(int r, uint64_t g) const {
  char* line = base_ + kLine * (1 + kLinesPerRank * static_cast<size_t>(size_) +
                                kBuffers * static_cast<size_t>(r) + g % kBuffers);
  return *reinterpret_cast<CallBuffers*>(line);
}

pid_t NodeSegment::pid(int r) const { return *pidOf(base_, r); }

void NodeSegment::publish(uint64_t g, const void* in, size_t inBytes, const void* out,
                          size_t outBytes, bool* sharedIn, bool* sharedOut) {
  CallBuffers& mine = callBuffers(rank_, g);
  mine = CallBuffers{};
  *sharedIn = peersMap_ && in && memory::sharedFind(in, inBytes, &mine.in);
  *sharedOut = peersMap_ && out && memory::sharedFind(out, outBytes, &mine.out);
}

Status NodeSegment::mapPeer(uint64_t g, int j, const char** in, const char** out) {
  *in = *out = nullptr;
  if (j == rank_ || !peersMap_) return Status::Ok;
  const CallBuffers& theirs = callBuffers(j, g);
  for (int o = 0; o < 2; ++o) {
    const memory::SharedRef& ref = o == 0 ? theirs.in : theirs.out;
    if (ref.ino == 0) continue;
    const char* at = memory::peerMap(pid(j), ref, g);
    if (!at) {
      RRT_ERROR("coll: cannot map rank %d's rrt_alloc_mem buffer (RRT_LOG=debug says why)", j);
      markFailed();
      return Status::ErrInternal;
    }
    (o == 0 ? *in : *out) = at;
  }
  return Status::Ok;
}

Status NodeSegment::mapPeers(uint64_t g, const char* const** peerIn, const char* const** peerOut) {
  const char** at = peerAddresses_.data();
  for (int j = 0; j < size_; ++j) RRT_TRY(mapPeer(g, j, &at[j], &at[size_ + j]));
  *peerIn = at;
  *peerOut = at + size_;
  return Status::Ok;
}

void NodeSegment::markFailed() { rankLine(base_, rank_)->failed.store(1, std::memory_order_release); }

// Waits until rank r's counter c is at least v, r marked itself failed, or r died: *seen says
// which. The error of the wait itself (a timeout) otherwise.
Status NodeSegment::watch(int r, int c, uint64_t v, Seen* seen) {
  struct Wait {
    NodeSegment* seg;
    int r, c;
    uint64_t v;
    uint32_t polls = 0;
    double lastLook = 0;
    Seen seen = Seen::kReached;
  } w{this, r, c, v};
  const Status s = core::waitFor([&w] {
    if (w.seg->load(w.r, w.c) >= w.v) return true;
    if ((++w.polls & 0xff) != 0) return false;
    if (rankLine(w.seg->base_, w.r)->failed.load(std::memory_order_acquire) != 0) {
      w.seen = Seen::kFailed;
      return true;
    }
    const double t = core::now();
    if (w.lastLook == 0) w.lastLook = t;
    if (t - w.lastLook < kLivenessSeconds) return false;
    w.lastLook = t;
    const pid_t pid = *pidOf(w.seg->base_, w.r);
    // Looked at again after: it may have counted and exited since.
    if (core::processAlive(pid) || w.seg->load(w.r, w.c) >= w.v) return false;
    w.seen = Seen::kDead;
    return true;
  });
  *seen = w.seen;
  return s;
}

Status NodeSegment::waitSlow(int r, int c, uint64_t v) {
  Seen seen;
  RRT_TRY(watch(r, c, v, &seen));
  if (seen == Seen::kReached) return Status::Ok;
  // This rank stops too: whoever waits for it learns so, rather than waiting forever.
  markFailed();
  if (seen == Seen::kFailed) {
    RRT_DEBUG("coll: rank %d failed a shared-memory collective", r);
    return Status::ErrInternal;
  }
  const int world = worldRanks_[static_cast<size_t>(r)];
  RRT_DEBUG("coll: rank %d (world %d) died during a shared-memory collective", r, world);
  if (p2p().peerFailed) p2p().peerFailed(world);
  return Status::ErrProcFailed;
}

void NodeSegment::settle(uint64_t done) {
  markFailed();
  for (int j = 0; j < size_; ++j) {
    Seen seen;
    if (j != rank_) (void)watch(j, kDone, done, &seen);
  }
}

}  // namespace rrt::coll
