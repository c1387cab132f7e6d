// Fuzz target: the verbs transport's parser of a peer's address blob
// (runtime/transport/verbs/address.h: LID, GID, MTU, then one QPN/PSN slot per world rank),
// reached through the public interface as a peer's bytes reach it: connect(peer, blob).
// Runs over the software RDMA device (tests/softrdma; fuzz_replay.sh and run_fuzzers.sh put it
// on LD_LIBRARY_PATH). One transport, rank 0 of a job of two with rank 1 on another node, is
// made once and brought up by start() with a well-formed blob for rank 1 (its slot for rank 0
// names our own QP: a loopback RC connection the device accepts), so rank 1 is reachable;
// every input is then offered to connect(1, ...), which must accept only a blob that is
// exactly as long as its count says, of this job's size, with a known version, a valid MTU and
// a QP for us, and must refuse ranks it does not serve whatever the blob.
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
    // Rank 1's blob: ours, with its slot for rank 0 naming our QP for rank 1.
    RRT_FUZZ_CHECK(t->address(&gPeerBlob) == Status::Ok);
    RRT_FUZZ_CHECK(gPeerBlob.size() == sizeof(AddressHeader) + kSize * sizeof(QpSlot));
    memcpy(gPeerBlob.data() + sizeof(AddressHeader),
           gPeerBlob.data() + sizeof(AddressHeader) + sizeof(QpSlot), sizeof(QpSlot));
    RRT_FUZZ_CHECK(t->start() == Status::Ok);
    RRT_FUZZ_CHECK(t->reachable(1));
    RRT_FUZZ_CHECK(t->connect(1, gPeerBlob.data(), gPeerBlob.size()) == Status::Ok);
    return t;
  }();
  return tx.get();
}

// What connect() must accept, and nothing else: the version-1 layout, complete, for this job, with our QP.
bool acceptable(const uint8_t* data, size_t size) {
  AddressHeader h;
  if (size < sizeof h) return false;
  memcpy(&h, data, sizeof h);
  if (h.magic != kAddrMagic || h.version != kAddrVersion || h.count != kSize ||
      size != sizeof h + kSize * sizeof(QpSlot) || h.mtu < IBV_MTU_256 || h.mtu > IBV_MTU_4096)
    return false;
  QpSlot s;
  memcpy(&s, data + sizeof h, sizeof s);  // the slot for rank 0
  return s.qpn != 0;
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
