// Fuzz target: the protocol engine's active-message handlers (runtime/proto/recv.cc, send.cc)
// fed with what a hostile or broken peer can send: any AM id, any header bytes, any ids and
// lengths, interleaved with receives and sends this rank posts. The engine runs as rank 0 of a
// job of two without PMIx (Engine::initLocal); rank 1 is reached through a recording transport
// whose get/put touch exactly the local buffer they are given (so ASan sees every overrun),
// and messages "from rank 1" go straight to Engine::deliver, as a transport would hand them.
//
// Input: a sequence of operations, one byte of opcode each, then its operands:
//   0 message     src selector, AM id, 16-bit length, that many bytes
//   1 post recv   context selector, source selector, tag, 24-bit size
//   2 post send   context selector, flags (bit 0 ssend), tag, 24-bit size (to rank 1)
//   3 progress    a few rounds of core::progress(), releasing what completed
//   4 probe       context selector, source selector, tag
//   5 cancel      index of a posted receive
// At the end rank 1 is declared failed, which must complete every operation involving it;
// what is left is cancelled, and every request and buffer must be accounted for (LeakSanitizer
// checks the rest).
#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/core/buffer_pool.h"
#include "runtime/core/progress.h"
#include "runtime/proto/comm.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"
#include "runtime/transport/self/self_transport.h"
#include "tests/unit/engine_harness.h"
#include "tests/fuzz/fuzz_target.h"

using namespace rrt;
using core::Request;

namespace {

// Rank 1 as seen from rank 0: accepts whatever is sent, moves one-sided data by touching the
// local buffer only (the remote side is the peer's own memory, not ours to check).
class PeerTransport final : public transport::Transport {
 public:
  PeerTransport() {
    caps_.flags = transport::kAmBcopy | transport::kGetZcopy | transport::kPutZcopy |
                  transport::kOrdered;
    caps_.maxAm = 8192;
    caps_.minZcopy = 0;
    caps_.maxZcopy = 1 << 16;
    caps_.zcopyMemTypes = memory::memTypeBit(memory::MemType::Host);
    caps_.eagerDefault = 1024;
  }
  const char* name() const override { return "fuzzpeer"; }
  const transport::Caps& caps() const override { return caps_; }
  Status address(std::vector<uint8_t>* blob) override {
    blob->clear();
    return Status::Ok;
  }
  bool reachable(int peer) const override { return peer == 1; }
  Status connect(int peer, const void*, size_t) override {
    return peer == 1 ? Status::Ok : Status::ErrRank;
  }
  Status amSend(int peer, transport::AmId id, const void* hdr, size_t hdrLen, const void* payload,
                size_t len) override {
    RRT_FUZZ_CHECK(peer == 1 && hdrLen + len <= caps_.maxAm);
    if (budget_ > 0 && --budget_ == 0) {  // now and then the ring is full
      budget_ = 7;
      return Status::NoResource;
    }
    sink_ += touch(hdr, hdrLen) + touch(payload, len) + id;
    return Status::Ok;
  }
  Status get(int peer, void* local, size_t len, transport::MemHandle*, uint64_t, const void*,
             size_t rkeyLen, transport::Completion*) override {
    RRT_FUZZ_CHECK(peer == 1 && rkeyLen <= transport::kMaxRkeyBytes && len <= caps_.maxZcopy);
    memset(local, 0x5a, len);
    return Status::Ok;
  }
  Status put(int peer, const void* local, size_t len, transport::MemHandle*, uint64_t,
             const void*, size_t rkeyLen, transport::Completion*) override {
    RRT_FUZZ_CHECK(peer == 1 && rkeyLen <= transport::kMaxRkeyBytes && len <= caps_.maxZcopy);
    sink_ += touch(local, len);
    return Status::Ok;
  }
  int progress() override { return 0; }
  uint64_t sink_ = 0;

 private:
  static uint64_t touch(const void* p, size_t n) {
    uint64_t s = 0;
    for (size_t i = 0; i < n; ++i) s += static_cast<const uint8_t*>(p)[i];
    return s;
  }
  transport::Caps caps_;
  int budget_ = 7;
};

struct Op {
  Request* req;
  std::unique_ptr<uint8_t[]> buf;  // exactly the posted size (ASan catches overruns)
  bool recv;
};

constexpr size_t kMaxOps = 64;
constexpr size_t kMaxSize = 1 << 20;

int pickSource(uint8_t s) { return s % 3 == 2 ? RRT_ANY_SOURCE : s % 3; }
int pickTag(uint8_t t) {
  // Small tags, the wildcard, and the negative tags rrt keeps for itself.
  if (t == 0xff) return RRT_ANY_TAG;
  return static_cast<int8_t>(t) % 8;
}

void releaseDone(std::vector<Op>& ops) {
  for (size_t i = 0; i < ops.size();) {
    if (ops[i].req->complete) {
      core::requestRelease(ops[i].req);
      ops[i] = std::move(ops.back());
      ops.pop_back();
    } else {
      ++i;
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  proto::Engine& e = proto::engine();
  auto* peerTx = new PeerTransport;
  RRT_FUZZ_CHECK(test::startRankZeroOfTwo("fuzz", true, peerTx) == Status::Ok);
  proto::commInitPredefined(0, 2);
  proto::Comm& world = *proto::commLookup(RRT_COMM_WORLD);

  std::vector<Op> ops;
  rrt::fuzz::Input in(data, size);
  while (!in.empty()) {
    const uint8_t opcode = in.u8() % 6;
    switch (opcode) {
      case 0: {
        const uint8_t s = in.u8();
        const int src = s < 0xf0 ? 1 : s - 0xf0 - 4;  // mostly rank 1; also 0 and invalid ranks
        const transport::AmId id = in.u8();
        size_t len = 0;
        const uint8_t* bytes = in.bytes(in.u16(), &len);
        std::unique_ptr<uint8_t[]> msg(new uint8_t[len ? len : 1]);  // exact size for ASan
        if (len) memcpy(msg.get(), bytes, len);
        if (src != 0) proto::Engine::deliver(&e, src, id, msg.get(), len);
        break;
      }
      case 1:
      case 2: {
        const bool recv = opcode == 1;
        const uint32_t ctxId = (in.u8() & 1) ? world.collCtx() : world.ctx;
        const uint8_t sel = in.u8();
        const int tag = pickTag(in.u8());
        const size_t lo = in.u16();  // 24 bits, little-endian, read in order
        const size_t bytes = (lo | (size_t{in.u8()} << 16)) % (kMaxSize + 1);
        if (ops.size() >= kMaxOps) break;
        Op op;
        op.recv = recv;
        op.buf.reset(new uint8_t[bytes ? bytes : 1]);
        memset(op.buf.get(), 0x33, bytes ? bytes : 1);
        Status s;
        if (recv) {
          s = proto::irecv(world, ctxId, op.buf.get(), bytes, pickSource(sel), tag, &op.req);
        } else {
          if (tag < 0) break;
          s = proto::isend(world, ctxId, op.buf.get(), bytes, 1, tag,
                           (sel & 1) ? core::kSendSync : 0, &op.req);
        }
        if (s == Status::Ok) ops.push_back(std::move(op));
        break;
      }
      case 3: {
        for (int i = 0; i < 4; ++i) core::progress();
        releaseDone(ops);
        break;
      }
      case 4: {
        const uint32_t ctxId = (in.u8() & 1) ? world.collCtx() : world.ctx;
        bool found = false;
        rrt_status_t status;
        const int src = pickSource(in.u8());  // arguments are unsequenced: read in order
        const int tag = pickTag(in.u8());
        (void)proto::iprobe(world, ctxId, src, tag, &found, &status);
        break;
      }
      case 5: {
        const uint8_t i = in.u8();
        if (!ops.empty()) (void)proto::cancel(ops[i % ops.size()].req);
        break;
      }
    }
  }
  // Teardown: a failed peer completes everything that involves it; what remains (wildcard
  // receives) is cancelled; unexpected messages are given back.
  for (int i = 0; i < 4; ++i) core::progress();
  e.failPeer(1, Status::ErrProcFailed);
  for (Op& op : ops) (void)proto::cancel(op.req);
  for (int i = 0; i < 4; ++i) core::progress();
  for (Op& op : ops) {
    RRT_FUZZ_CHECK(op.req->complete);
    core::requestRelease(op.req);
  }
  ops.clear();
  for (proto::MatchQueues* q : e.matcher().all()) {
    if (!q) continue;
    while (Request* u = q->unexpected().popFront()) {
      if (u->buf) core::bufferPut(u->buf, u->bytes);
      core::requestRelease(u);
    }
    RRT_FUZZ_CHECK(q->postedCount() == 0);
  }
  proto::commFinalizeAll();
  e.finalize();
  return 0;
}
