// rrt_info: what this build and this job would do. Prints the version, the transports that came
// up and their capabilities, every tunable with its value and where the value came from, the
// point-to-point protocol per size range to each kind of peer, and the collective algorithm
// table. Run it alone (one rank: self only) or as `rrun -n 2 rrt_info` to see shared memory.
// Only rank 0 prints. Uses the runtime's internals, so it links the convenience library.
#include <cstdio>
#include <string>

#include "rrt/rrt.h"
#include "rrt_config.h"
#include "runtime/gpu/gpu.h"
#include "runtime/coll/selection.h"
#include "runtime/core/config.h"
#include "runtime/proto/engine.h"

namespace {

using rrt::transport::Caps;

std::string flagsOf(uint32_t f) {
  namespace t = rrt::transport;
  std::string s;
  auto add = [&](uint32_t bit, const char* name) {
    if (f & bit) s += s.empty() ? name : std::string(",") + name;
  };
  add(t::kAmBcopy, "am_bcopy");
  add(t::kPutZcopy, "put_zcopy");
  add(t::kGetZcopy, "get_zcopy");
  add(t::kOrdered, "ordered");
  add(t::kNeedsReg, "needs_reg");
  add(t::kEventFd, "event_fd");
  return s.empty() ? "-" : s;
}

std::string sizeText(size_t n) {
  char buf[32];
  if (n == ~size_t{0}) return "inf";
  if (n >= (1u << 20) && n % (1u << 20) == 0) snprintf(buf, sizeof buf, "%zuM", n >> 20);
  else if (n >= 1024 && n % 1024 == 0) snprintf(buf, sizeof buf, "%zuK", n >> 10);
  else snprintf(buf, sizeof buf, "%zu", n);
  return buf;
}

void printTransports() {
  printf("transports (RRT_TRANSPORTS selects):\n");
  for (const auto& tx : rrt::proto::engine().transports()) {
    const Caps& c = tx->caps();
    printf("  %-6s flags=%s max_am=%s zcopy=[%s, %s] eager_default=%s latency=%.2fus "
           "bandwidth=%.0fMB/s\n",
           tx->name(), flagsOf(c.flags).c_str(), sizeText(c.maxAm).c_str(),
           sizeText(c.minZcopy).c_str(), sizeText(c.maxZcopy).c_str(),
           sizeText(c.eagerDefault).c_str(), c.latencyUs, c.bandwidthMBs);
    const std::string more = tx->describe();
    if (!more.empty()) printf("         %s\n", more.c_str());
  }
}

void printTunables() {
  namespace cfg = rrt::config;
  printf("tunables (environment RRT_<NAME>):\n");
  for (int i = 0; i < static_cast<int>(cfg::Tunable::Count); ++i) {
    auto t = static_cast<cfg::Tunable>(i);
    const cfg::Row& r = cfg::row(t);
    printf("  RRT_%-20s = %-10s (%s)  %s\n", r.env, cfg::value(t).c_str(),
           cfg::fromEnvironment(t) ? "environment" : "default", r.help);
  }
}

void printProtocols(int peer, const char* what) {
  rrt::proto::Peer* p = rrt::proto::engine().peer(peer);
  if (!p || !p->tx) {
    printf("  to %s (rank %d): unreachable\n", what, peer);
    return;
  }
  const rrt::proto::PeerProto& pp = p->proto;
  printf("  to %s (rank %d, %s):\n", what, peer, p->tx->name());
  printf("    %10s .. %-10s %s\n", "0", sizeText(pp.eagerLimit).c_str(),
         rrt::proto::engine().protocolFor(peer, 0));
  if (pp.zcopyThreshold > pp.eagerLimit + 1)
    printf("    %10s .. %-10s %s (fragments of %s)\n", sizeText(pp.eagerLimit + 1).c_str(),
           sizeText(pp.zcopyThreshold - 1).c_str(),
           rrt::proto::engine().protocolFor(peer, pp.eagerLimit + 1),
           sizeText(pp.amPayload).c_str());
  size_t from = pp.zcopyThreshold > pp.eagerLimit ? pp.zcopyThreshold : pp.eagerLimit + 1;
  printf("    %10s .. %-10s %s\n", sizeText(from).c_str(), "",
         rrt::proto::engine().protocolFor(peer, from));
}

}  // namespace

int main(int argc, char** argv) {
  int rc = rrt_init(&argc, &argv);
  if (rc != RRT_SUCCESS) {
    fprintf(stderr, "rrt_info: rrt_init failed: %s\n", rrt_strerror(rc));
    return 1;
  }
  int rank = 0, size = 1;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  if (rank == 0) {
    const auto& job = rrt::proto::engine().job();
    printf("rrt %s (%d ranks, %zu on this node)\n", PACKAGE_VERSION, size, job.localPeers.size());
    printTransports();
    printf("CUDA device buffers: %s\n", rrt::gpu::describe());
    if (rrt::gpu::enabled()) {
      printf("  device message path by size (same node): <= 64K %s, above %s\n",
             rrt::gpu::protoName(rrt::gpu::protoFor(rrt::memory::MemType::Cuda,
                                                     rrt::memory::MemType::Cuda, 1, true)),
             rrt::gpu::protoName(rrt::gpu::protoFor(rrt::memory::MemType::Cuda,
                                                     rrt::memory::MemType::Cuda, 1 << 20, true)));
      bool gdr = false;  // a transport that registers device memory (verbs: GPUDirect RDMA)
      for (const auto& tx : rrt::proto::engine().transports())
        gdr = gdr || (tx->caps().zcopyMemTypes & rrt::memory::memTypeBit(rrt::memory::MemType::Cuda));
      printf("  device message path by size (other nodes): <= 64K %s, above %s\n",
             rrt::gpu::protoName(rrt::gpu::protoFor(rrt::memory::MemType::Cuda,
                                                     rrt::memory::MemType::Cuda, 1, false, gdr)),
             rrt::gpu::protoName(rrt::gpu::protoFor(rrt::memory::MemType::Cuda,
                                                     rrt::memory::MemType::Cuda, 1 << 20, false, gdr)));
    }
    printTunables();
    printf("point-to-point protocol by message size:\n");
    printProtocols(0, "self");
    int local = -1, remote = -1;
    for (int w = 1; w < size; ++w) {
      bool sameNode = job.nodeOf[static_cast<size_t>(w)] == job.nodeOf[0];
      if (sameNode && local < 0) local = w;
      if (!sameNode && remote < 0) remote = w;
    }
    if (local > 0) printProtocols(local, "a rank on this node");
    if (remote > 0) printProtocols(remote, "a rank on another node");
    rrt::coll::bindProtoP2p();  // the table's rows depend on how local messages go
    rrt::coll::printSelection(stdout);
    fflush(stdout);
  }
  rc = rrt_finalize();
  return rc == RRT_SUCCESS ? 0 : 1;
}
