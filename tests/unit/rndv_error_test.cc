// A rendezvous whose one-sided transfer fails, at the protocol layer: the engine runs as rank 0
// of two without PMIx (Engine::initLocal, as tests/fuzz/fuzz_engine_am does); rank 1 is a
// scripted transport whose put/get fail (at once or on completion) and which records what
// rank 0 sends; rank 1's messages are handed to Engine::deliver as a transport would.
// What must hold: the side whose RDMA READ / WRITE failed ends its request with the error and
// still sends a FIN that carries it (so the peer does not wait forever, and does not take
// missing data for a message); a FIN that carries an error ends the waiting request with one.
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "runtime/core/config.h"
#include "runtime/core/progress.h"
#include "runtime/core/request.h"
#include "runtime/proto/comm.h"
#include "runtime/proto/engine.h"
#include "runtime/proto/p2p.h"
#include "runtime/proto/wire.h"
#include "runtime/transport/self/self_transport.h"
#include "tests/unit/engine_harness.h"

namespace rrt::proto {
namespace {

struct Sent {
  transport::AmId id;
  std::vector<uint8_t> bytes;
};

// Rank 1: one-sided operations fail (ErrArg at once, or InProgress then ErrTransport).
class FailingPeer final : public transport::Transport {
 public:
  explicit FailingPeer(bool failAtOnce) : failAtOnce_(failAtOnce) {
    caps_.flags = transport::kAmBcopy | transport::kGetZcopy | transport::kPutZcopy |
                  transport::kOrdered;
    caps_.maxAm = 8192;
    caps_.maxZcopy = 1 << 20;
    caps_.zcopyMemTypes = memory::memTypeBit(memory::MemType::Host);
    caps_.eagerDefault = 1024;
  }
  const char* name() const override { return "failingpeer"; }
  const transport::Caps& caps() const override { return caps_; }
  Status address(std::vector<uint8_t>* blob) override {
    blob->clear();
    return Status::Ok;
  }
  bool reachable(int peer) const override { return peer == 1; }
  Status connect(int peer, const void*, size_t) override {
    return peer == 1 ? Status::Ok : Status::ErrRank;
  }
  Status amSend(int, transport::AmId id, const void* hdr, size_t hdrLen, const void* payload,
                size_t len) override {
    Sent s{id, {}};
    s.bytes.assign(static_cast<const uint8_t*>(hdr), static_cast<const uint8_t*>(hdr) + hdrLen);
    if (len)
      s.bytes.insert(s.bytes.end(), static_cast<const uint8_t*>(payload),
                     static_cast<const uint8_t*>(payload) + len);
    sent.push_back(s);
    return Status::Ok;
  }
  Status get(int, void*, size_t, transport::MemHandle*, uint64_t, const void*, size_t,
             transport::Completion* done) override {
    return oneSided(done);
  }
  Status put(int, const void*, size_t, transport::MemHandle*, uint64_t, const void*, size_t,
             transport::Completion* done) override {
    return oneSided(done);
  }
  int progress() override {
    std::vector<transport::Completion*> fire;
    fire.swap(inFlight_);
    for (transport::Completion* c : fire) c->fn(c, Status::ErrTransport);  // as a REM_ACCESS_ERR
    return static_cast<int>(fire.size());
  }
  std::vector<Sent> sent;

 private:
  Status oneSided(transport::Completion* done) {
    if (failAtOnce_) return Status::ErrArg;
    inFlight_.push_back(done);
    return Status::InProgress;
  }
  transport::Caps caps_;
  bool failAtOnce_;
  std::vector<transport::Completion*> inFlight_;
};

class RndvError : public ::testing::Test {
 protected:
  void start(const char* proto, bool failAtOnce) {
    setenv("RRT_RNDV_PROTO", proto, 1);
    setenv("RRT_EAGER_LIMIT", "1024", 1);
    config::reload();
    peer_ = new FailingPeer(failAtOnce);
    ASSERT_EQ(test::startRankZeroOfTwo("rndv-error", true, peer_), Status::Ok);
    commInitPredefined(0, 2);
    world_ = commLookup(RRT_COMM_WORLD);
  }
  void TearDown() override {
    engine().failPeer(1, Status::ErrProcFailed);
    for (int i = 0; i < 4; ++i) core::progress();
    commFinalizeAll();
    engine().finalize();
    unsetenv("RRT_RNDV_PROTO");
    unsetenv("RRT_EAGER_LIMIT");
    config::reload();
  }
  void spin() {
    for (int i = 0; i < 8; ++i) core::progress();
  }
  // The last message of this id rank 0 sent, or nullptr.
  const Sent* last(transport::AmId id) const {
    for (size_t i = peer_->sent.size(); i-- > 0;)
      if (peer_->sent[i].id == id) return &peer_->sent[i];
    return nullptr;
  }
  void deliver(transport::AmId id, const void* data, size_t len) {
    Engine::deliver(&engine(), 1, id, data, len);
  }
  // An RTS from rank 1 for a 64 KiB message with tag 5, proposing mode.
  void rtsFromPeer(wire::RndvMode mode, uint64_t sreq) {
    struct {
      wire::RtsHeader h;
      uint8_t rkey[4];
    } m{};
    m.h.m.ctx = world_->ctx;
    m.h.m.src = 1;
    m.h.m.tag = 5;
    m.h.m.seq = 0;
    m.h.sreq = sreq;
    m.h.size = kBytes;
    m.h.addr = 0x10000;
    m.h.mode = static_cast<uint8_t>(mode);
    m.h.rkeyLen = 4;
    deliver(wire::kRts, &m, sizeof m);
  }
  static constexpr size_t kBytes = 64 * 1024;
  FailingPeer* peer_ = nullptr;
  Comm* world_ = nullptr;
  std::vector<uint8_t> buf_ = std::vector<uint8_t>(kBytes, 0x5a);
};

// RPUT: our RDMA WRITE fails (on completion, or at once). The send ends with an error, and the
// receiver gets a FIN that says so instead of nothing (it would wait for ever).
TEST_F(RndvError, FailedPutEndsTheSendAndTellsTheReceiver) {
  for (bool atOnce : {false, true}) {
    SCOPED_TRACE(atOnce ? "put fails at once" : "put fails on completion");
    if (atOnce) TearDown();  // a fresh engine for the second round
    start("put", atOnce);
    core::Request* r = nullptr;
    ASSERT_EQ(isend(*world_, world_->ctx, buf_.data(), kBytes, 1, 5, 0, &r), Status::Ok);
    spin();
    const Sent* rts = last(wire::kRts);
    ASSERT_NE(rts, nullptr);
    wire::RtsHeader h;
    memcpy(&h, rts->bytes.data(), sizeof h);
    struct {
      wire::CtsHeader c;
      uint8_t rkey[4];
    } cts{};
    cts.c.sreq = h.sreq;
    cts.c.rreq = 0x77;
    cts.c.addr = 0x20000;
    cts.c.len = kBytes;
    cts.c.mode = static_cast<uint8_t>(wire::RndvMode::Put);
    cts.c.rkeyLen = 4;
    deliver(wire::kCts, &cts, sizeof cts);
    spin();
    ASSERT_TRUE(r->complete) << "the send waits for ever after its put failed";
    EXPECT_NE(r->status.error, RRT_SUCCESS);
    const Sent* fin = last(wire::kFin);
    ASSERT_NE(fin, nullptr) << "no FIN: the receiver would wait for ever";
    ASSERT_GE(fin->bytes.size(), sizeof(wire::FinHeader));
    wire::FinHeader f;
    memcpy(&f, fin->bytes.data(), sizeof f);
    EXPECT_EQ(f.id, 0x77u);
    EXPECT_NE(f.status, 0) << "the FIN says the data is there";
    core::requestRelease(r);
  }
}

// RGET: our RDMA READ fails. The receive ends with the error (its buffer does not hold the
// message) and the FIN that releases the sender carries it.
TEST_F(RndvError, FailedGetEndsTheReceiveWithTheError) {
  for (bool atOnce : {false, true}) {
    SCOPED_TRACE(atOnce ? "get fails at once" : "get fails on completion");
    if (atOnce) TearDown();
    start("get", atOnce);
    core::Request* r = nullptr;
    ASSERT_EQ(irecv(*world_, world_->ctx, buf_.data(), kBytes, 1, 5, &r), Status::Ok);
    rtsFromPeer(wire::RndvMode::Get, 0x99);
    spin();
    ASSERT_TRUE(r->complete);
    EXPECT_NE(r->status.error, RRT_SUCCESS) << "a receive whose read failed reported success";
    const Sent* fin = last(wire::kFin);
    ASSERT_NE(fin, nullptr);
    ASSERT_GE(fin->bytes.size(), sizeof(wire::FinHeader));
    wire::FinHeader f;
    memcpy(&f, fin->bytes.data(), sizeof f);
    EXPECT_EQ(f.id, 0x99u);
    EXPECT_NE(f.status, 0);
    core::requestRelease(r);
  }
}

// The peer's FIN says its transfer failed: our request ends with an error, not with success.
TEST_F(RndvError, FinWithAnErrorFailsTheWaitingRequest) {
  start("put", false);
  // A receive in RPUT mode waits for the sender's FIN after our CTS.
  core::Request* r = nullptr;
  ASSERT_EQ(irecv(*world_, world_->ctx, buf_.data(), kBytes, 1, 5, &r), Status::Ok);
  rtsFromPeer(wire::RndvMode::Put, 0x55);
  spin();
  const Sent* cts = last(wire::kCts);
  ASSERT_NE(cts, nullptr);
  wire::CtsHeader c;
  memcpy(&c, cts->bytes.data(), sizeof c);
  ASSERT_EQ(c.mode, static_cast<uint8_t>(wire::RndvMode::Put));
  ASSERT_FALSE(r->complete);
  wire::FinHeader f{c.rreq, RRT_ERR_TRANSPORT, 0};
  deliver(wire::kFin, &f, sizeof f);
  ASSERT_TRUE(r->complete);
  EXPECT_NE(r->status.error, RRT_SUCCESS) << "a FIN that reports a failed write ended the receive well";
  core::requestRelease(r);

  // And a send waiting for the receiver's answer: the receiver reports its transfer failed.
  core::Request* s = nullptr;
  ASSERT_EQ(isend(*world_, world_->ctx, buf_.data(), kBytes, 1, 6, 0, &s), Status::Ok);
  spin();
  const Sent* rts = last(wire::kRts);
  ASSERT_NE(rts, nullptr);
  wire::RtsHeader h;
  memcpy(&h, rts->bytes.data(), sizeof h);
  wire::FinHeader g{h.sreq, RRT_ERR_TRANSPORT, 0};
  deliver(wire::kFin, &g, sizeof g);
  ASSERT_TRUE(s->complete);
  EXPECT_NE(s->status.error, RRT_SUCCESS);
  core::requestRelease(s);
}

}  // namespace
}  // namespace rrt::proto
