// Fuzz target: the shared-memory transport's connect(blob) with the bytes a peer published
// through PMIx (runtime/transport/shm/address.h). One transport for a node of two ranks is
// made once (its segment unlinked at once, so nothing is left in /dev/shm); every input is
// offered to connect(1, ...), which must accept only a blob that names the expected peer.
#include <sys/mman.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>

#include "runtime/transport/shm/address.h"
#include "runtime/transport/shm/segment.h"
#include "runtime/transport/shm/shm_transport.h"
#include "tests/fuzz/fuzz_target.h"

using namespace rrt;

namespace {

void ignoreAm(void*, int, transport::AmId, const void*, size_t) {}

transport::Transport* shmTransport() {
  static transport::TransportPtr tx = [] {
    transport::Context ctx;
    ctx.rank = 0;
    ctx.size = 2;
    ctx.localPeers = {0, 1};
    ctx.nodeOf = {0, 0};
    ctx.jobId = "fuzz-" + std::to_string(getpid());
    ctx.amHandler = &ignoreAm;
    Status st;
    transport::TransportPtr t = transport::shm::create(ctx, &st);
    shm_unlink(transport::shm::segmentName(ctx.jobId, 0).c_str());
    RRT_FUZZ_CHECK(t != nullptr);
    return t;
  }();
  return tx.get();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  transport::Transport* tx = shmTransport();
  std::unique_ptr<uint8_t[]> blob(new uint8_t[size ? size : 1]);  // exact size for ASan
  if (size) memcpy(blob.get(), data, size);
  const Status st = tx->connect(1, size ? blob.get() : nullptr, size);
  if (st == Status::Ok) {
    transport::shm::AddressBlob a;
    RRT_FUZZ_CHECK(size == sizeof a);
    memcpy(&a, data, sizeof a);
    RRT_FUZZ_CHECK(a.magic == transport::shm::kAddressMagic && a.worldRank == 1 &&
                   a.localIndex == 1 && a.pid > 0 && a.localSize == 2);
  }
  // Connecting to anyone but the one local peer is refused whatever the blob.
  RRT_FUZZ_CHECK(tx->connect(0, blob.get(), size) != Status::Ok);
  RRT_FUZZ_CHECK(tx->connect(2, blob.get(), size) != Status::Ok);
  return 0;
}
