// Shared-memory windows (rrt_win_allocate_shared, MPI_Win_allocate_shared): the ranks of one
// node allocate one segment together, every rank's part back to back in rank order (as MPI's
// default contiguous layout asks), and every rank maps all of it, so a rank loads and stores
// its neighbours' parts directly. The window itself is an ordinary one over its part (created
// like rrt_win_create), so put / get / accumulate and every synchronization work as on any
// window, on the shm transport.
//
// The segment: the window's rank 0 creates it in /dev/shm (0600, named after the job like the
// shm transport's, so that rrun removes it if the job dies before the unlink) and reserves its
// pages (posix_fallocate: a too-small /dev/shm fails here, not as SIGBUS on first touch); it
// broadcasts whether that worked with the name's serial number; every rank maps it; once an
// allgather says all have (or someone failed), rank 0 unlinks the name. Every step's outcome
// is shared, so all ranks return the same status and none waits for a rank that gave up.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string>

#include "runtime/coll/coll.h"
#include "runtime/core/log.h"
#include "runtime/proto/engine.h"
#include "runtime/rma/window.h"

namespace rrt::rma {

SharedMapping::~SharedMapping() {
  if (base) munmap(base, bytes);
}

namespace {

Status allgather(proto::Comm& comm, const void* mine, void* all, size_t bytes) {
  coll::bindProtoP2p();
  coll::CollArgs a;
  a.kind = coll::CollKind::Allgather;
  a.sbuf = mine;
  a.rbuf = all;
  a.blockBytes = bytes;
  return coll::run(comm, std::move(a));
}

Status bcast(proto::Comm& comm, void* buf, size_t bytes) {
  coll::bindProtoP2p();
  coll::CollArgs a;
  a.kind = coll::CollKind::Bcast;
  a.rbuf = buf;
  a.count = bytes;
  a.typeSize = 1;
  a.root = 0;
  return coll::run(comm, std::move(a));
}

// The worst status of all ranks (Ok only if every rank's is), the same on every rank.
Status agree(proto::Comm& comm, Status mine) {
  const int32_t code = static_cast<int32_t>(mine);
  std::vector<int32_t> all(static_cast<size_t>(comm.size));
  RRT_TRY(allgather(comm, &code, all.data(), sizeof code));
  for (int32_t c : all)
    if (c != static_cast<int32_t>(Status::Ok)) return static_cast<Status>(c);
  return Status::Ok;
}

std::string segmentName(int leaderWorldRank, uint32_t serial) {
  return "/rrt-" + proto::engine().job().jobId + "-w" + std::to_string(leaderWorldRank) + "-" +
         std::to_string(serial);
}

// Rank 0: creates the segment and reserves its pages.
Status createSegment(const std::string& name, size_t bytes) {
  int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
  if (fd < 0) {
    RRT_WARN("rrt_win_allocate_shared: shm_open(%s): %s", name.c_str(), strerror(errno));
    return Status::ErrNoMemory;
  }
  int err = ftruncate(fd, static_cast<off_t>(bytes)) == 0 ? 0 : errno;
  if (!err) err = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
  close(fd);
  if (err) {
    RRT_WARN("rrt_win_allocate_shared: cannot size %s to %zu bytes: %s (enlarge /dev/shm)",
             name.c_str(), bytes, strerror(err));
    shm_unlink(name.c_str());
    return Status::ErrNoMemory;
  }
  return Status::Ok;
}

Status mapSegment(const std::string& name, size_t bytes, char** base) {
  int fd = shm_open(name.c_str(), O_RDWR, 0);
  if (fd < 0) {
    RRT_WARN("rrt_win_allocate_shared: shm_open(%s): %s", name.c_str(), strerror(errno));
    return Status::ErrNoMemory;
  }
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  close(fd);
  if (p == MAP_FAILED) {
    RRT_WARN("rrt_win_allocate_shared: mmap of %zu bytes: %s", bytes, strerror(errno));
    return Status::ErrNoMemory;
  }
  *base = static_cast<char*>(p);
  return Status::Ok;
}

}  // namespace

Status createShared(proto::Comm& parent, size_t size, int dispUnit, Window** out) {
  *out = nullptr;
  // Every rank sees the same node map, so all of them refuse alike, without a message.
  const auto& nodeOf = proto::engine().job().nodeOf;
  if (!nodeOf.empty()) {
    const uint32_t node = nodeOf[static_cast<size_t>(parent.worldRank(0))];
    for (int r = 1; r < parent.size; ++r)
      if (nodeOf[static_cast<size_t>(parent.worldRank(r))] != node) {
        RRT_WARN("rrt_win_allocate_shared: the communicator spans several nodes (rank %d is on "
                 "node %u, rank 0 on %u): memory can be shared only within a node",
                 r, nodeOf[static_cast<size_t>(parent.worldRank(r))], node);
        return Status::ErrComm;
      }
  }
  const size_t n = static_cast<size_t>(parent.size);
  struct Part {
    uint64_t size;
    int64_t dispUnit;
  };
  const Part mine{size, dispUnit};
  std::vector<Part> parts(n);
  RRT_TRY(allgather(parent, &mine, parts.data(), sizeof mine));
  SharedMapping m;
  size_t total = 0;
  for (const Part& p : parts) {
    m.offs.push_back(total);
    m.sizes.push_back(p.size);
    m.dispUnits.push_back(static_cast<int>(p.dispUnit));
    total += p.size;
  }
  m.bytes = std::max<size_t>(total, 1);

  // Rank 0 creates; its outcome and the name's serial reach everyone.
  static uint32_t serial = 0;
  struct {
    int32_t status;
    uint32_t serial;
  } made{static_cast<int32_t>(Status::Ok), serial};
  if (parent.rank == 0) {
    ++serial;
    made.status = static_cast<int32_t>(createSegment(segmentName(parent.worldRank(0), made.serial),
                                                     m.bytes));
  }
  RRT_TRY(bcast(parent, &made, sizeof made));
  if (made.status != static_cast<int32_t>(Status::Ok)) return static_cast<Status>(made.status);
  const std::string name = segmentName(parent.worldRank(0), made.serial);
  Status st = mapSegment(name, m.bytes, &m.base);
  st = agree(parent, st);
  if (parent.rank == 0) shm_unlink(name.c_str());  // mapped everywhere (or given up): unnamed
  RRT_TRY(st);

  Window* w = nullptr;
  RRT_TRY(create(parent, Kind::Shared, m.base + m.offs[static_cast<size_t>(parent.rank)], size,
                 dispUnit, &w));
  w->shared.base = m.base;
  w->shared.bytes = m.bytes;
  w->shared.offs = std::move(m.offs);
  w->shared.sizes = std::move(m.sizes);
  w->shared.dispUnits = std::move(m.dispUnits);
  m.base = nullptr;  // the window unmaps it now
  *out = w;
  return Status::Ok;
}

Status sharedQuery(const Window& w, int rank, size_t* size, int* dispUnit, void** base) {
  if (w.kind != Kind::Shared) return Status::ErrArg;
  const auto& sizes = w.shared.sizes;
  size_t r;
  if (rank == RRT_PROC_NULL) {
    // The first non-empty part; when every part is empty, rank 0's (empty) place.
    r = 0;
    while (r < sizes.size() && sizes[r] == 0) ++r;
    if (r == sizes.size()) r = 0;
  } else if (rank < 0 || static_cast<size_t>(rank) >= sizes.size()) {
    return Status::ErrRank;
  } else {
    r = static_cast<size_t>(rank);
  }
  *size = sizes[r];
  *dispUnit = w.shared.dispUnits[r];
  // An empty part has no address (as in MPICH); only the all-empty RRT_PROC_NULL case answers
  // with the segment's (empty) start.
  *base = sizes[r] > 0 || rank == RRT_PROC_NULL ? w.shared.base + w.shared.offs[r] : nullptr;
  return Status::Ok;
}

}  // namespace rrt::rma
