// Fuzz target: the verbs transport's parser of a peer's address blob
// (runtime/transport/verbs/address.h: LID, GID, MTU, the eager class table, then one QPN/PSN
// slot per world rank and class),
// reached through the public interface as a peer's bytes reach it: connect(peer, blob).
// Runs over the software RDMA device (tests/softrdma; fuzz_replay.sh and run_fuzzers.sh put it
// on LD_LIBRARY_PATH). One transport, rank 0 of a job of two with rank 1 on another node, is
// made once and brought up by start() with a well-formed blob for rank 1 (its slot for rank 0
// names our own QP: a loopback RC connection the device accepts), so rank 1 is reachable;
// every input is then offered to connect(1, ...), which must accept only a blob that is
// exactly as long as its count says, of this job's size, with a known version, a valid MTU, a
// class table like ours (as many classes, ascending, each a multiple of 64 bytes, at least 2
// credits, the largest no smaller than ours) and a QP for us in every class, and must refuse
// ranks it does not serve whatever the blob.
//
// The parser dispatches on the header's version; a new blob version adds its seeds to
// make_seeds.py (fuzz_verbs_address) and its acceptance rule to acceptable() below.
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include <infiniband/verbs.h>

#include "runtime/core/config.h"
#include "runtime/core/log.h"
#include "runtime/transport/verbs/address.h"
#include "runtime/transport/verbs/verbs_transport.h"
#include "tests/fuzz/fuzz_target.h"

using namespace rrt;
using namespace rrt::transport::verbs;

namespace {

constexpr int kSize = 2;
std::vector<uint8_t> gPeerBlob;  // rank 1's blob as start() looks it up
ClassTable gClasses;             // our own eager classes

void ignoreAm(void*, int, transport::AmId, const void*, size_t) {}

Status lookupPeer(int peer, const std::string& key, std::vector<uint8_t>* out) {
  if (peer != 1 || key != "rrt.verbs") return Status::ErrWireup;
  *out = gPeerBlob;
  return Status::Ok;
}

transport::Transport* verbsTransport() {
  static transport::TransportPtr tx = [] {
    setenv("RRT_TRANSPORTS", "verbs", 1);
    config::reload();
    transport::Context ctx;
    ctx.rank = 0;
    ctx.size = kSize;
    ctx.localPeers = {0};
    ctx.nodeOf = {0, 1};
    ctx.jobId = "fuzz-verbs-address";
    ctx.amHandler = &ignoreAm;
    ctx.lookup = &lookupPeer;
    Status st;
    transport::TransportPtr t = create(ctx, &st);
    if (!t) {
      fprintf(stderr, "fuzz_verbs_address: no verbs transport (%s); is the software RDMA device "
              "(tests/softrdma/lib) on LD_LIBRARY_PATH?\n", statusName(st));
      abort();
    }
    // Rank 1's blob: ours, with its slots for rank 0 naming our QPs for rank 1.
    RRT_FUZZ_CHECK(t->address(&gPeerBlob) == Status::Ok);
    ClassTable ct;
    memcpy(&ct, gPeerBlob.data() + sizeof(AddressHeader), sizeof ct);
    gClasses = ct;
    const size_t head = sizeof(AddressHeader) + sizeof(ClassTable);
    RRT_FUZZ_CHECK(gPeerBlob.size() == head + kSize * ct.n * sizeof(QpSlot));
    memcpy(gPeerBlob.data() + head, gPeerBlob.data() + head + ct.n * sizeof(QpSlot),
           ct.n * sizeof(QpSlot));
    RRT_FUZZ_CHECK(t->start() == Status::Ok);
    RRT_FUZZ_CHECK(t->reachable(1));
    RRT_FUZZ_CHECK(t->connect(1, gPeerBlob.data(), gPeerBlob.size()) == Status::Ok);
    return t;
  }();
  return tx.get();
}

// What connect() must accept, and nothing else: the version-3 pmix layout, complete, for this
// job, with classes like ours and our QP in each.
bool acceptable(const uint8_t* data, size_t size) {
  AddressHeader h;
  ClassTable t;
  if (size < sizeof h + sizeof t) return false;
  memcpy(&h, data, sizeof h);
  memcpy(&t, data + sizeof h, sizeof t);
  if (h.magic != kAddrMagic || h.version != kAddrVersion || h.hasGid > 1 ||
      h.mtu < IBV_MTU_256 || h.mtu > IBV_MTU_4096 || h.cm != 0 || t.n != gClasses.n)
    return false;
  for (int c = 0; c < t.n; ++c)
    if (t.cls[c].bufBytes < 64 || t.cls[c].bufBytes % 64 || t.cls[c].credits < 2 ||
        (c > 0 && t.cls[c].bufBytes <= t.cls[c - 1].bufBytes))
      return false;
  if (t.cls[t.n - 1].bufBytes < gClasses.cls[t.n - 1].bufBytes) return false;
  if (h.count != static_cast<uint32_t>(kSize) * t.n ||
      size != sizeof h + sizeof t + h.count * sizeof(QpSlot))
    return false;
  for (int c = 0; c < t.n; ++c) {  // the slots for rank 0
    QpSlot s;
    memcpy(&s, data + sizeof h + sizeof t + c * sizeof s, sizeof s);
    if (s.qpn == 0 || s.qpn > 0xffffff) return false;
  }
  return true;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (!getenv("RRT_LOG")) log::gLevel = static_cast<log::Level>(-1);  // rejections are expected
  transport::Transport* tx = verbsTransport();
  std::unique_ptr<uint8_t[]> blob(new uint8_t[size ? size : 1]);  // exact size for ASan
  if (size) memcpy(blob.get(), data, size);
  const Status st = tx->connect(1, size ? blob.get() : nullptr, size);
  RRT_FUZZ_CHECK((st == Status::Ok) == acceptable(data, size));
  // Itself and ranks outside the job are refused whatever the blob; rank 1 stays reachable.
  RRT_FUZZ_CHECK(tx->connect(0, blob.get(), size) != Status::Ok);
  RRT_FUZZ_CHECK(tx->connect(2, blob.get(), size) != Status::Ok);
  RRT_FUZZ_CHECK(tx->connect(-1, blob.get(), size) != Status::Ok);
  RRT_FUZZ_CHECK(tx->reachable(1));
  return 0;
}
