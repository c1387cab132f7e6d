// Stand-alone test of the software RDMA device: two processes (A, the parent, and B, a forked
// child) each open softrdma0 and talk over RC/UC queue pairs; a socketpair carries the
// out-of-band exchange (QP numbers, rkeys) and the lockstep between them.
// Run through softrdma_test.sh, which points LD_LIBRARY_PATH at tests/softrdma/lib; the test
// refuses to run against any other libibverbs (it checks that the device is softrdma0).
#include <infiniband/verbs.h>
#include <arpa/inet.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

char gRole = '?';
int gSock = -1;

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      std::fprintf(stderr, "[%c] %s:%d: CHECK failed: %s\n", gRole, __FILE__, __LINE__, #cond); \
      std::_Exit(1);                                                                       \
    }                                                                                      \
  } while (0)

template <class T>
void put(const T& value) {
  CHECK(write(gSock, &value, sizeof value) == static_cast<ssize_t>(sizeof value));
}
template <class T>
T get() {
  T value;
  size_t at = 0;
  while (at < sizeof value) {
    ssize_t n = read(gSock, reinterpret_cast<char*>(&value) + at, sizeof value - at);
    CHECK(n > 0);
    at += static_cast<size_t>(n);
  }
  return value;
}
void barrier() {
  put(0);
  CHECK(get<int>() == 0);
}

struct QpInfo {
  uint32_t qpn;
  uint32_t psn;
  ibv_gid gid;
};
struct MrInfo {
  uint64_t addr;
  uint64_t length;
  uint32_t rkey;
};

constexpr int kAllAccess = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE |
                           IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_ATOMIC;

ibv_context* gCtx;

void stage(const char* name) {
  if (std::getenv("SOFTRDMA_TEST_VERBOSE")) std::fprintf(stderr, "[%c] %s\n", gRole, name);
}
ibv_pd* gPd;

ibv_qp* createQp(ibv_cq* cq, ibv_srq* srq = nullptr, ibv_qp_type type = IBV_QPT_RC) {
  ibv_qp_init_attr init{};
  init.send_cq = init.recv_cq = cq;
  init.srq = srq;
  init.qp_type = type;
  init.cap.max_send_wr = 64;
  init.cap.max_recv_wr = 64;
  init.cap.max_send_sge = 4;
  init.cap.max_recv_sge = 4;
  init.cap.max_inline_data = 64;
  ibv_qp* qp = ibv_create_qp(gPd, &init);
  CHECK(qp);
  return qp;
}

int toInit(ibv_qp* qp, int access) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  a.qp_access_flags = access;
  return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

ibv_qp_attr rtrAttr(const QpInfo& remote, uint8_t minRnrTimer) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = IBV_MTU_4096;
  a.dest_qp_num = remote.qpn;
  a.rq_psn = remote.psn;
  a.max_dest_rd_atomic = 4;
  a.min_rnr_timer = minRnrTimer;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = remote.gid;
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = 1;
  return a;
}
constexpr int kRtrMask = IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                         IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER;

ibv_qp_attr rtsAttr(uint32_t psn, uint8_t rnrRetry) {
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_RTS;
  a.sq_psn = psn;
  a.timeout = 14;
  a.retry_cnt = 7;
  a.rnr_retry = rnrRetry;
  a.max_rd_atomic = 4;
  return a;
}
constexpr int kRtsMask = IBV_QP_STATE | IBV_QP_SQ_PSN | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                         IBV_QP_RNR_RETRY | IBV_QP_MAX_QP_RD_ATOMIC;

// Both processes call this in the same order: a fresh QP on its own CQ, connected to the peer's.
ibv_qp* connectedQp(int access = kAllAccess, uint8_t rnrRetry = 7, uint8_t minRnrTimer = 1,
                    ibv_srq* srq = nullptr, ibv_qp_type type = IBV_QPT_RC,
                    ibv_comp_channel* channel = nullptr) {
  ibv_cq* cq = ibv_create_cq(gCtx, 256, nullptr, channel, 0);
  CHECK(cq);
  ibv_qp* qp = createQp(cq, srq, type);
  CHECK(toInit(qp, access) == 0);
  QpInfo mine{qp->qp_num, static_cast<uint32_t>(std::rand() & 0xffffff), {}};
  CHECK(ibv_query_gid(gCtx, 1, 0, &mine.gid) == 0);
  put(mine);
  QpInfo remote = get<QpInfo>();
  ibv_qp_attr rtr = rtrAttr(remote, minRnrTimer);
  int rtrMask = kRtrMask;
  if (type == IBV_QPT_UC) rtrMask &= ~(IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
  CHECK(ibv_modify_qp(qp, &rtr, rtrMask) == 0);
  ibv_qp_attr rts = rtsAttr(mine.psn, rnrRetry);
  int rtsMask = type == IBV_QPT_UC ? IBV_QP_STATE | IBV_QP_SQ_PSN : kRtsMask;
  CHECK(ibv_modify_qp(qp, &rts, rtsMask) == 0);
  barrier();
  return qp;
}

ibv_wc waitWc(ibv_cq* cq) {
  ibv_wc wc{};
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  for (;;) {
    int n = ibv_poll_cq(cq, 1, &wc);
    CHECK(n >= 0);
    if (n == 1) return wc;
    CHECK(std::chrono::steady_clock::now() < deadline);
  }
}

void expectWc(ibv_cq* cq, ibv_wc_status status, uint64_t wrId) {
  ibv_wc wc = waitWc(cq);
  if (wc.status != status || wc.wr_id != wrId)
    std::fprintf(stderr, "[%c] got status %s wr_id %llu, want %s wr_id %llu\n", gRole,
                 ibv_wc_status_str(wc.status), static_cast<unsigned long long>(wc.wr_id),
                 ibv_wc_status_str(status), static_cast<unsigned long long>(wrId));
  CHECK(wc.status == status && wc.wr_id == wrId);
}

void expectEmpty(ibv_cq* cq) {
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  ibv_wc wc;
  CHECK(ibv_poll_cq(cq, 1, &wc) == 0);
}

int postRecv(ibv_qp* qp, ibv_mr* mr, void* addr, uint32_t length, uint64_t wrId) {
  ibv_sge sge{reinterpret_cast<uintptr_t>(addr), length, mr->lkey};
  ibv_recv_wr wr{}, *bad;
  wr.wr_id = wrId;
  wr.sg_list = &sge;
  wr.num_sge = 1;
  return qp->srq ? ibv_post_srq_recv(qp->srq, &wr, &bad) : ibv_post_recv(qp, &wr, &bad);
}

int postSend(ibv_qp* qp, ibv_wr_opcode op, ibv_sge* sges, int numSge, uint64_t wrId,
             uint64_t raddr = 0, uint32_t rkey = 0, unsigned flags = IBV_SEND_SIGNALED,
             uint32_t imm = 0) {
  ibv_send_wr wr{}, *bad;
  wr.wr_id = wrId;
  wr.opcode = op;
  wr.sg_list = sges;
  wr.num_sge = numSge;
  wr.send_flags = flags;
  wr.imm_data = imm;
  wr.wr.rdma.remote_addr = raddr;
  wr.wr.rdma.rkey = rkey;
  return ibv_post_send(qp, &wr, &bad);
}

int postAtomic(ibv_qp* qp, ibv_wr_opcode op, ibv_sge* sge, uint64_t wrId, uint64_t raddr,
               uint32_t rkey, uint64_t compareAdd, uint64_t swap) {
  ibv_send_wr wr{}, *bad;
  wr.wr_id = wrId;
  wr.opcode = op;
  wr.sg_list = sge;
  wr.num_sge = 1;
  wr.send_flags = IBV_SEND_SIGNALED;
  wr.wr.atomic.remote_addr = raddr;
  wr.wr.atomic.rkey = rkey;
  wr.wr.atomic.compare_add = compareAdd;
  wr.wr.atomic.swap = swap;
  return ibv_post_send(qp, &wr, &bad);
}

ibv_qp_state stateOf(ibv_qp* qp) {
  ibv_qp_attr a{};
  ibv_qp_init_attr init{};
  CHECK(ibv_query_qp(qp, &a, IBV_QP_STATE, &init) == 0);
  return a.qp_state;
}

unsigned char pattern(size_t i, int seed) { return static_cast<unsigned char>(i * 7 + seed); }

// ---- local checks (process A only) -------------------------------------------------------

void testDeviceAndPort() {
  int n = 0;
  ibv_device** list = ibv_get_device_list(&n);
  CHECK(list && n == 1 && std::strcmp(ibv_get_device_name(list[0]), "softrdma0") == 0);
  ibv_free_device_list(list);
  ibv_port_attr port;
  CHECK(ibv_query_port(gCtx, 1, &port) == 0);
  CHECK(port.state == IBV_PORT_ACTIVE && port.link_layer == IBV_LINK_LAYER_ETHERNET);
  CHECK(ibv_query_port(gCtx, 2, &port) != 0);
  ibv_gid gid;
  CHECK(ibv_query_gid(gCtx, 1, 0, &gid) == 0 && gid.raw[0] == 0xfe);
  CHECK(ibv_query_gid(gCtx, 1, 5, &gid) != 0);
}

void testStateMachine() {
  ibv_cq* cq = ibv_create_cq(gCtx, 16, nullptr, nullptr, 0);
  ibv_qp* qp = createQp(cq);
  QpInfo self{qp->qp_num, 1, {}};
  CHECK(ibv_query_gid(gCtx, 1, 0, &self.gid) == 0);
  ibv_qp_attr rtr = rtrAttr(self, 1), rts = rtsAttr(1, 7);
  CHECK(ibv_modify_qp(qp, &rtr, kRtrMask) == EINVAL);  // RESET -> RTR
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_INIT;
  a.port_num = 1;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT) == EINVAL);
  a.port_num = 2;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS) == EINVAL);
  CHECK(stateOf(qp) == IBV_QPS_RESET);
  CHECK(toInit(qp, kAllAccess) == 0 && stateOf(qp) == IBV_QPS_INIT);
  char buf[8];
  ibv_mr* mr = ibv_reg_mr(gPd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE);
  ibv_sge sge{reinterpret_cast<uintptr_t>(buf), 8, mr->lkey};
  CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 1) == EINVAL);  // before RTS
  CHECK(ibv_modify_qp(qp, &rts, kRtsMask) == EINVAL);        // INIT -> RTS
  CHECK(ibv_modify_qp(qp, &rtr, kRtrMask & ~IBV_QP_MIN_RNR_TIMER) == EINVAL);  // missing
  CHECK(ibv_modify_qp(qp, &rtr, kRtrMask | IBV_QP_SQ_PSN) == EINVAL);          // not allowed
  rtr.ah_attr.is_global = 0;  // RoCE port: a GRH is mandatory
  CHECK(ibv_modify_qp(qp, &rtr, kRtrMask) == EINVAL);
  rtr.ah_attr.is_global = 1;
  rtr.path_mtu = static_cast<ibv_mtu>(9);
  CHECK(ibv_modify_qp(qp, &rtr, kRtrMask) == EINVAL);
  rtr.path_mtu = IBV_MTU_4096;
  CHECK(ibv_modify_qp(qp, &rtr, kRtrMask) == 0 && stateOf(qp) == IBV_QPS_RTR);
  CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 1) == EINVAL);  // RTR: receive only
  CHECK(ibv_modify_qp(qp, &rts, kRtsMask & ~IBV_QP_RETRY_CNT) == EINVAL);
  CHECK(ibv_modify_qp(qp, &rts, kRtsMask) == 0 && stateOf(qp) == IBV_QPS_RTS);
  a = {};
  a.qp_state = IBV_QPS_RESET;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0 && stateOf(qp) == IBV_QPS_RESET);
  // Bad memory registrations.
  CHECK(!ibv_reg_mr(gPd, buf, sizeof buf, IBV_ACCESS_REMOTE_WRITE));  // needs LOCAL_WRITE
  CHECK(!ibv_reg_mr(gPd, reinterpret_cast<void*>(16), 4096, IBV_ACCESS_LOCAL_WRITE));
  CHECK(ibv_destroy_qp(qp) == 0);
  CHECK(ibv_dereg_mr(mr) == 0);
  CHECK(ibv_destroy_cq(cq) == 0);
}

void testFlushOnError() {
  ibv_cq* cq = ibv_create_cq(gCtx, 16, nullptr, nullptr, 0);
  ibv_qp* qp = createQp(cq);
  CHECK(toInit(qp, kAllAccess) == 0);
  static char buf[64];
  ibv_mr* mr = ibv_reg_mr(gPd, buf, sizeof buf, IBV_ACCESS_LOCAL_WRITE);
  for (uint64_t i = 1; i <= 3; ++i) CHECK(postRecv(qp, mr, buf, 64, i) == 0);
  ibv_qp_attr a{};
  a.qp_state = IBV_QPS_ERR;
  CHECK(ibv_modify_qp(qp, &a, IBV_QP_STATE) == 0);
  for (uint64_t i = 1; i <= 3; ++i) expectWc(cq, IBV_WC_WR_FLUSH_ERR, i);
  CHECK(postRecv(qp, mr, buf, 64, 4) == 0);  // posted in ERR: flushed at once
  expectWc(cq, IBV_WC_WR_FLUSH_ERR, 4);
  expectEmpty(cq);
  ibv_destroy_qp(qp);
  ibv_dereg_mr(mr);
  ibv_destroy_cq(cq);
}

// ---- two-process checks ------------------------------------------------------------------

constexpr size_t kBufBytes = 1 << 20;

void run(bool a) {
  std::vector<unsigned char> buf(kBufBytes + 64, 0);
  std::vector<unsigned char> roBuf(4096, 0x33);
  ibv_mr* mr = ibv_reg_mr(gPd, buf.data(), kBufBytes, kAllAccess);
  ibv_mr* roMr = ibv_reg_mr(gPd, roBuf.data(), roBuf.size(), IBV_ACCESS_REMOTE_READ);
  CHECK(mr && roMr);
  put(MrInfo{reinterpret_cast<uintptr_t>(buf.data()), kBufBytes, mr->rkey});
  MrInfo peer = get<MrInfo>();
  put(MrInfo{reinterpret_cast<uintptr_t>(roBuf.data()), roBuf.size(), roMr->rkey});
  MrInfo peerRo = get<MrInfo>();
  unsigned char* b = buf.data();

  ibv_qp* qp = connectedQp();
  ibv_cq* cq = qp->send_cq;

  // SEND from two SGEs into one receive buffer.
  stage("SEND from two SGEs into one receive buffer.");
  if (!a) CHECK(postRecv(qp, mr, b, 4096, 11) == 0);
  barrier();
  if (a) {
    for (size_t i = 0; i < 1000; ++i) b[i] = pattern(i, 1);
    ibv_sge sges[2] = {{reinterpret_cast<uintptr_t>(b), 300, mr->lkey},
                       {reinterpret_cast<uintptr_t>(b + 300), 700, mr->lkey}};
    CHECK(postSend(qp, IBV_WR_SEND, sges, 2, 21) == 0);
    ibv_wc wc = waitWc(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_SEND && wc.wr_id == 21);
  } else {
    ibv_wc wc = waitWc(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV && wc.wr_id == 11);
    CHECK(wc.byte_len == 1000 && !(wc.wc_flags & IBV_WC_WITH_IMM));
    for (size_t i = 0; i < 1000; ++i) CHECK(b[i] == pattern(i, 1));
  }
  barrier();

  // SEND_WITH_IMM, then an inline SEND whose buffer is overwritten right after posting.
  stage("SEND_WITH_IMM, then an inline SEND whose buffer is overwritten right after posting.");
  if (!a) {
    CHECK(postRecv(qp, mr, b, 4096, 12) == 0);
    CHECK(postRecv(qp, mr, b + 4096, 4096, 13) == 0);
  }
  barrier();
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 16, mr->lkey};
    CHECK(postSend(qp, IBV_WR_SEND_WITH_IMM, &sge, 1, 22, 0, 0, IBV_SEND_SIGNALED, htonl(0xdeadbeef)) == 0);
    char small[50];
    std::memset(small, 'i', sizeof small);
    ibv_sge in{reinterpret_cast<uintptr_t>(small), sizeof small, 0};  // lkey unused when inline
    CHECK(postSend(qp, IBV_WR_SEND, &in, 1, 23, 0, 0, IBV_SEND_SIGNALED | IBV_SEND_INLINE) == 0);
    std::memset(small, 'X', sizeof small);
    char big[100] = {};
    ibv_sge tooBig{reinterpret_cast<uintptr_t>(big), sizeof big, 0};
    CHECK(postSend(qp, IBV_WR_SEND, &tooBig, 1, 24, 0, 0, IBV_SEND_INLINE) == EINVAL);
    expectWc(cq, IBV_WC_SUCCESS, 22);
    expectWc(cq, IBV_WC_SUCCESS, 23);
  } else {
    ibv_wc wc = waitWc(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 12 && wc.byte_len == 16);
    CHECK((wc.wc_flags & IBV_WC_WITH_IMM) && wc.imm_data == htonl(0xdeadbeef));
    wc = waitWc(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 13 && wc.byte_len == 50);
    for (int i = 0; i < 50; ++i) CHECK(b[4096 + i] == 'i');
  }
  barrier();

  // RDMA WRITE of 512 KiB, unsignaled, followed by a signaled one (completions in order).
  stage("RDMA WRITE of 512 KiB, unsignaled, followed by a signaled one (completions in order).");
  if (a) {
    for (size_t i = 0; i < (512 << 10); ++i) b[i] = pattern(i, 2);
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 512 << 10, mr->lkey};
    CHECK(postSend(qp, IBV_WR_RDMA_WRITE, &sge, 1, 31, peer.addr + 4096, peer.rkey, 0) == 0);
    ibv_sge one{reinterpret_cast<uintptr_t>(b), 1, mr->lkey};
    CHECK(postSend(qp, IBV_WR_RDMA_WRITE, &one, 1, 32, peer.addr, peer.rkey) == 0);
    ibv_wc wc = waitWc(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.wr_id == 32 && wc.opcode == IBV_WC_RDMA_WRITE);
  }
  barrier();
  if (!a) {
    for (size_t i = 0; i < (512 << 10); ++i) CHECK(b[4096 + i] == pattern(i, 2));
    CHECK(postRecv(qp, mr, b + kBufBytes - 64, 64, 14) == 0);
  }
  barrier();

  // RDMA WRITE with immediate: data plus a receive completion.
  stage("RDMA WRITE with immediate: data plus a receive completion.");
  if (a) {
    for (size_t i = 0; i < 100; ++i) b[i] = pattern(i, 3);
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 100, mr->lkey};
    CHECK(postSend(qp, IBV_WR_RDMA_WRITE_WITH_IMM, &sge, 1, 33, peer.addr + 200, peer.rkey, IBV_SEND_SIGNALED, htonl(7)) == 0);
    expectWc(cq, IBV_WC_SUCCESS, 33);
  } else {
    ibv_wc wc = waitWc(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RECV_RDMA_WITH_IMM && wc.wr_id == 14);
    CHECK(wc.byte_len == 100 && wc.imm_data == htonl(7));
    for (size_t i = 0; i < 100; ++i) CHECK(b[200 + i] == pattern(i, 3));
  }
  barrier();

  // RDMA READ of 256 KiB into two local SGEs.
  stage("RDMA READ of 256 KiB into two local SGEs.");
  if (!a)
    for (size_t i = 0; i < (256 << 10); ++i) b[i] = pattern(i, 4);
  barrier();
  if (a) {
    std::memset(b, 0, 256 << 10);
    ibv_sge sges[2] = {{reinterpret_cast<uintptr_t>(b), 1000, mr->lkey},
                       {reinterpret_cast<uintptr_t>(b + 1000), (256 << 10) - 1000, mr->lkey}};
    CHECK(postSend(qp, IBV_WR_RDMA_READ, sges, 2, 34, peer.addr, peer.rkey) == 0);
    ibv_wc wc = waitWc(cq);
    CHECK(wc.status == IBV_WC_SUCCESS && wc.opcode == IBV_WC_RDMA_READ && wc.wr_id == 34);
    for (size_t i = 0; i < (256 << 10); ++i) CHECK(b[i] == pattern(i, 4));
  }
  barrier();

  // Atomics on an 8-byte word of B.
  stage("Atomics on an 8-byte word of B.");
  auto* word = reinterpret_cast<uint64_t*>(b + kBufBytes - 128);
  if (!a) *word = 40;
  barrier();
  if (a) {
    auto* result = reinterpret_cast<uint64_t*>(b + kBufBytes - 8);
    ibv_sge sge{reinterpret_cast<uintptr_t>(result), 8, mr->lkey};
    uint64_t target = peer.addr + kBufBytes - 128;
    CHECK(postAtomic(qp, IBV_WR_ATOMIC_FETCH_AND_ADD, &sge, 41, target, peer.rkey, 2, 0) == 0);
    expectWc(cq, IBV_WC_SUCCESS, 41);
    CHECK(*result == 40);
    CHECK(postAtomic(qp, IBV_WR_ATOMIC_CMP_AND_SWP, &sge, 42, target, peer.rkey, 42, 100) == 0);
    expectWc(cq, IBV_WC_SUCCESS, 42);
    CHECK(*result == 42);
    CHECK(postAtomic(qp, IBV_WR_ATOMIC_CMP_AND_SWP, &sge, 43, target, peer.rkey, 1, 5) == 0);
    expectWc(cq, IBV_WC_SUCCESS, 43);
    CHECK(*result == 100);
  }
  barrier();
  if (!a) CHECK(*word == 100);

  // RNR: A sends before B posts a receive; rnr_retry = 7 retries until B does.
  stage("RNR: A sends before B posts a receive; rnr_retry = 7 retries until B does.");
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 64, mr->lkey};
    CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 51) == 0);
    barrier();
    expectWc(cq, IBV_WC_SUCCESS, 51);
  } else {
    barrier();
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(postRecv(qp, mr, b, 64, 15) == 0);
    expectWc(cq, IBV_WC_SUCCESS, 15);
  }
  barrier();

  // Local protection error (bad lkey): completes in error, the QP enters ERR, later WRs flush.
  stage("Local protection error (bad lkey): completes in error, the QP enters ERR, later WRs flush.");
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 64, mr->lkey + 1};
    CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 61) == 0);
    expectWc(cq, IBV_WC_LOC_PROT_ERR, 61);
    sge.lkey = mr->lkey;
    CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 62, 0, 0, 0) == 0);
    expectWc(cq, IBV_WC_WR_FLUSH_ERR, 62);
    CHECK(stateOf(qp) == IBV_QPS_ERR);
  }
  barrier();
  if (!a) CHECK(stateOf(qp) == IBV_QPS_RTS);  // nothing reached B

  // Bad rkey on WRITE: remote access error; both QPs end in ERR, B's receive is flushed.
  stage("Bad rkey on WRITE: remote access error; both QPs end in ERR, B's receive is flushed.");
  qp = connectedQp();
  cq = qp->send_cq;
  if (!a) CHECK(postRecv(qp, mr, b, 64, 16) == 0);
  barrier();
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 64, mr->lkey};
    CHECK(postSend(qp, IBV_WR_RDMA_WRITE, &sge, 1, 71, peer.addr, peer.rkey ^ 0x5a5a00) == 0);
    CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 72, 0, 0, 0) == 0);
    expectWc(cq, IBV_WC_REM_ACCESS_ERR, 71);
    expectWc(cq, IBV_WC_WR_FLUSH_ERR, 72);
  } else {
    expectWc(cq, IBV_WC_WR_FLUSH_ERR, 16);
  }
  CHECK(stateOf(qp) == IBV_QPS_ERR);
  barrier();

  // Out-of-bounds READ: remote access error.
  stage("Out-of-bounds READ: remote access error.");
  qp = connectedQp();
  cq = qp->send_cq;
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 4096, mr->lkey};
    CHECK(postSend(qp, IBV_WR_RDMA_READ, &sge, 1, 81, peer.addr + peer.length - 100, peer.rkey) == 0);
    expectWc(cq, IBV_WC_REM_ACCESS_ERR, 81);
  }
  barrier();

  // WRITE into a read-only MR: remote access error; READ from it works.
  stage("WRITE into a read-only MR: remote access error; READ from it works.");
  qp = connectedQp();
  cq = qp->send_cq;
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 64, mr->lkey};
    CHECK(postSend(qp, IBV_WR_RDMA_READ, &sge, 1, 91, peerRo.addr, peerRo.rkey) == 0);
    expectWc(cq, IBV_WC_SUCCESS, 91);
    CHECK(b[0] == 0x33 && b[63] == 0x33);
    CHECK(postSend(qp, IBV_WR_RDMA_WRITE, &sge, 1, 92, peerRo.addr, peerRo.rkey) == 0);
    expectWc(cq, IBV_WC_REM_ACCESS_ERR, 92);
  }
  barrier();

  // QP without remote-write access: a valid rkey is still refused.
  stage("QP without remote-write access: a valid rkey is still refused.");
  qp = connectedQp(IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ);
  cq = qp->send_cq;
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 64, mr->lkey};
    CHECK(postSend(qp, IBV_WR_RDMA_WRITE, &sge, 1, 95, peer.addr, peer.rkey) == 0);
    expectWc(cq, IBV_WC_REM_ACCESS_ERR, 95);
  }
  barrier();

  // Receive buffer too small: requester REM_INV_REQ_ERR, responder LOC_LEN_ERR.
  stage("Receive buffer too small: requester REM_INV_REQ_ERR, responder LOC_LEN_ERR.");
  qp = connectedQp();
  cq = qp->send_cq;
  if (!a) CHECK(postRecv(qp, mr, b, 16, 17) == 0);
  barrier();
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 100, mr->lkey};
    CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 101) == 0);
    expectWc(cq, IBV_WC_REM_INV_REQ_ERR, 101);
  } else {
    expectWc(cq, IBV_WC_LOC_LEN_ERR, 17);
  }
  barrier();

  // RNR retries exhausted (rnr_retry = 1, no receive ever posted).
  stage("RNR retries exhausted (rnr_retry = 1, no receive ever posted).");
  qp = connectedQp(kAllAccess, 1, 1);
  cq = qp->send_cq;
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 8, mr->lkey};
    CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 111) == 0);
    expectWc(cq, IBV_WC_RNR_RETRY_EXC_ERR, 111);
  }
  barrier();

  // SRQ shared by two QPs of B, with a limit event.
  stage("SRQ shared by two QPs of B, with a limit event.");
  ibv_srq* srq = nullptr;
  if (!a) {
    ibv_srq_init_attr init{};
    init.attr.max_wr = 16;
    init.attr.max_sge = 1;
    srq = ibv_create_srq(gPd, &init);
    CHECK(srq);
  }
  ibv_qp* q1 = connectedQp(kAllAccess, 7, 1, srq);
  ibv_qp* q2 = connectedQp(kAllAccess, 7, 1, srq);
  if (!a) {
    for (uint64_t i = 0; i < 4; ++i) CHECK(postRecv(q1, mr, b + i * 128, 128, 200 + i) == 0);
    ibv_srq_attr limit{};
    limit.srq_limit = 3;
    CHECK(ibv_modify_srq(srq, &limit, IBV_SRQ_LIMIT) == 0);
  }
  barrier();
  if (a) {
    for (size_t i = 0; i < 20; ++i) b[i] = pattern(i, 5);
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 20, mr->lkey};
    CHECK(postSend(q1, IBV_WR_SEND, &sge, 1, 121) == 0);
    expectWc(q1->send_cq, IBV_WC_SUCCESS, 121);
    CHECK(postSend(q2, IBV_WR_SEND, &sge, 1, 122) == 0);
    expectWc(q2->send_cq, IBV_WC_SUCCESS, 122);
  } else {
    ibv_wc w1 = waitWc(q1->recv_cq), w2 = waitWc(q2->recv_cq);
    CHECK(w1.status == IBV_WC_SUCCESS && w1.qp_num == q1->qp_num && w1.wr_id == 200);
    CHECK(w2.status == IBV_WC_SUCCESS && w2.qp_num == q2->qp_num && w2.wr_id == 201);
    for (size_t i = 0; i < 20; ++i) CHECK(b[128 + i] == pattern(i, 5));
    ibv_async_event event;
    CHECK(ibv_get_async_event(gCtx, &event) == 0);
    CHECK(event.event_type == IBV_EVENT_SRQ_LIMIT_REACHED && event.element.srq == srq);
    ibv_ack_async_event(&event);
  }
  barrier();

  // Completion channel: B sleeps in ibv_get_cq_event until A's SEND lands.
  stage("Completion channel: B sleeps in ibv_get_cq_event until A's SEND lands.");
  ibv_comp_channel* channel = ibv_create_comp_channel(gCtx);
  CHECK(channel);
  qp = connectedQp(kAllAccess, 7, 1, nullptr, IBV_QPT_RC, channel);
  cq = qp->send_cq;
  if (!a) {
    CHECK(postRecv(qp, mr, b, 64, 18) == 0);
    CHECK(ibv_req_notify_cq(cq, 0) == 0);
  }
  barrier();
  if (a) {
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 8, mr->lkey};
    CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 131) == 0);
    expectWc(cq, IBV_WC_SUCCESS, 131);
  } else {
    ibv_cq* eventCq;
    void* eventContext;
    CHECK(ibv_get_cq_event(channel, &eventCq, &eventContext) == 0 && eventCq == cq);
    ibv_ack_cq_events(cq, 1);
    expectWc(cq, IBV_WC_SUCCESS, 18);
  }
  barrier();

  // UC: SEND and WRITE.
  stage("UC: SEND and WRITE.");
  qp = connectedQp(kAllAccess, 7, 1, nullptr, IBV_QPT_UC);
  cq = qp->send_cq;
  if (!a) CHECK(postRecv(qp, mr, b, 64, 19) == 0);
  barrier();
  if (a) {
    for (size_t i = 0; i < 64; ++i) b[i] = pattern(i, 6);
    ibv_sge sge{reinterpret_cast<uintptr_t>(b), 64, mr->lkey};
    CHECK(postSend(qp, IBV_WR_SEND, &sge, 1, 141) == 0);
    expectWc(cq, IBV_WC_SUCCESS, 141);
    CHECK(postSend(qp, IBV_WR_RDMA_READ, &sge, 1, 142, peer.addr, peer.rkey) == EINVAL);
  } else {
    expectWc(cq, IBV_WC_SUCCESS, 19);
    for (size_t i = 0; i < 64; ++i) CHECK(b[i] == pattern(i, 6));
  }
  barrier();

  // dma-buf MRs (GPUDirect RDMA's registration): each side registers part of a memfd at an
  // iova of its choosing (a "device address" with no CPU mapping); A reads B's into its own,
  // then writes back; each checks the bytes through a mapping of its memfd.
  stage("dma-buf MRs: RDMA READ and WRITE between two memfd-backed regions addressed by iova.");
  {
    constexpr size_t kDmaBytes = 256 << 10, kOffset = 4096 + 96;
    const int fd = memfd_create("softrdma-test-dmabuf", MFD_CLOEXEC);
    CHECK(fd >= 0 && ftruncate(fd, kDmaBytes + 8192) == 0);
    auto* view = static_cast<unsigned char*>(
        mmap(nullptr, kDmaBytes + 8192, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0));
    CHECK(view != MAP_FAILED);
    const uint64_t iova = a ? 0x7e0000000000ull : 0x7d0000100000ull;
    CHECK(!ibv_reg_dmabuf_mr(gPd, 0, kDmaBytes + 8193, iova, fd, kAllAccess));  // past the end
    CHECK(!ibv_reg_dmabuf_mr(gPd, 0, 4096, iova, -1, kAllAccess));               // no fd
    ibv_mr* dmr = ibv_reg_dmabuf_mr(gPd, kOffset, kDmaBytes, iova, fd, kAllAccess);
    CHECK(dmr && reinterpret_cast<uintptr_t>(dmr->addr) == kOffset && dmr->length == kDmaBytes);
    close(fd);  // the registration keeps the memory
    if (!a)
      for (size_t i = 0; i < kDmaBytes; ++i) view[kOffset + i] = pattern(i, 7);
    put(MrInfo{iova, kDmaBytes, dmr->rkey});
    MrInfo peerDma = get<MrInfo>();
    ibv_qp* dq = connectedQp();
    if (a) {
      ibv_sge sge{iova + 10, kDmaBytes - 10, dmr->lkey};
      CHECK(postSend(dq, IBV_WR_RDMA_READ, &sge, 1, 151, peerDma.addr + 10, peerDma.rkey) == 0);
      expectWc(dq->send_cq, IBV_WC_SUCCESS, 151);
      for (size_t i = 10; i < kDmaBytes; ++i) CHECK(view[kOffset + i] == pattern(i, 7));
      for (size_t i = 0; i < 4096; ++i) view[kOffset + i] = pattern(i, 8);
      ibv_sge back{iova, 4096, dmr->lkey};
      CHECK(postSend(dq, IBV_WR_RDMA_WRITE, &back, 1, 152, peerDma.addr + 8192, peerDma.rkey) == 0);
      expectWc(dq->send_cq, IBV_WC_SUCCESS, 152);
    }
    barrier();
    if (!a)
      for (size_t i = 0; i < 4096; ++i) CHECK(view[kOffset + 8192 + i] == pattern(i, 8));
    barrier();
    CHECK(ibv_dereg_mr(dmr) == 0);
    munmap(view, kDmaBytes + 8192);
  }
}

}  // namespace

int main() {
  int fds[2];
  CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, fds) == 0);
  pid_t child = fork();
  CHECK(child >= 0);
  bool a = child != 0;
  gRole = a ? 'A' : 'B';
  gSock = a ? fds[0] : fds[1];
  close(a ? fds[1] : fds[0]);
  std::srand(static_cast<unsigned>(getpid()));

  ibv_device** list = ibv_get_device_list(nullptr);
  CHECK(list && list[0]);
  if (std::strcmp(ibv_get_device_name(list[0]), "softrdma0") != 0) {
    std::fprintf(stderr, "not running over the software RDMA device (LD_LIBRARY_PATH?)\n");
    return 1;
  }
  gCtx = ibv_open_device(list[0]);
  CHECK(gCtx);
  ibv_free_device_list(list);
  gPd = ibv_alloc_pd(gCtx);
  CHECK(gPd);
  if (a) {
    testDeviceAndPort();
    testStateMachine();
    testFlushOnError();
    std::printf("local checks: ok\n");
  }
  barrier();
  run(a);
  if (a) {
    int status = 0;
    CHECK(waitpid(child, &status, 0) == child);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    std::printf("two-process checks: ok\n");
  }
  return 0;
}
