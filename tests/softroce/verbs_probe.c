/* verbs_probe: how a verbs device behaves where implementations may differ, for the Soft-RoCE
 * tier (tests/softroce/README.md). Runs in one process: pairs of RC queue pairs on one device,
 * connected to each other. Prints one "PROBE name: value" line per behaviour and exits 1 when a
 * behaviour the IB spec fixes is wrong (remote access error on an out-of-bounds READ, length
 * errors on a too-small receive, RNR retries exhausted: which error the too-small receive gets is
 * reported, not judged, since rxe differs from the spec there). Implementation-defined behaviours (a post
 * before RTS, a SEND to a QP that does not exist, MTU, limits) are reported, not judged: the
 * host test prints them beside the software device's (tests/softrdma) answers.
 *
 *   verbs_probe [-d DEVICE] [-g GID_INDEX] [-w SECONDS]
 * -w bounds the wait for the SEND to a missing QP (default 20). */
#define _GNU_SOURCE
#include <errno.h>
#include <infiniband/verbs.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static struct ibv_context *ctx;
static struct ibv_pd *pd;
static int gid_index = 1;
static union ibv_gid gid;
static enum ibv_mtu mtu;
static int failures;
static char buf_a[16384] __attribute__((aligned(4096)));
static char buf_b[16384] __attribute__((aligned(4096)));
static struct ibv_mr *mr_a, *mr_b, *mr_small;

struct end { struct ibv_cq *cq; struct ibv_qp *qp; };

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec * 1e-9;
}

static void check(const char *name, int ok, const char *what) {
  printf("CHECK %s: %s%s%s\n", name, ok ? "ok" : "WRONG", what ? " " : "", what ? what : "");
  if (!ok) failures++;
}

static int make_end(struct end *e, int max_inline) {
  e->cq = ibv_create_cq(ctx, 64, NULL, NULL, 0);
  if (!e->cq) return -1;
  struct ibv_qp_init_attr a = {0};
  a.send_cq = a.recv_cq = e->cq;
  a.qp_type = IBV_QPT_RC;
  a.cap.max_send_wr = a.cap.max_recv_wr = 16;
  a.cap.max_send_sge = a.cap.max_recv_sge = 1;
  a.cap.max_inline_data = max_inline;
  e->qp = ibv_create_qp(pd, &a);
  return e->qp ? 0 : -1;
}

static void free_end(struct end *e) {
  if (e->qp) ibv_destroy_qp(e->qp);
  if (e->cq) ibv_destroy_cq(e->cq);
  e->qp = NULL; e->cq = NULL;
}

static int to_init(struct ibv_qp *qp) {
  struct ibv_qp_attr a = {0};
  a.qp_state = IBV_QPS_INIT;
  a.pkey_index = 0;
  a.port_num = 1;
  a.qp_access_flags = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
  return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS);
}

static int to_rtr(struct ibv_qp *qp, uint32_t dest_qpn, int min_rnr_timer) {
  struct ibv_qp_attr a = {0};
  a.qp_state = IBV_QPS_RTR;
  a.path_mtu = mtu;
  a.dest_qp_num = dest_qpn;
  a.rq_psn = 0;
  a.max_dest_rd_atomic = 1;
  a.min_rnr_timer = min_rnr_timer;
  a.ah_attr.is_global = 1;
  a.ah_attr.grh.dgid = gid;
  a.ah_attr.grh.sgid_index = gid_index;
  a.ah_attr.grh.hop_limit = 1;
  a.ah_attr.port_num = 1;
  return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN |
                                   IBV_QP_RQ_PSN | IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER);
}

static int to_rts(struct ibv_qp *qp, int timeout, int retry, int rnr_retry) {
  struct ibv_qp_attr a = {0};
  a.qp_state = IBV_QPS_RTS;
  a.timeout = timeout;
  a.retry_cnt = retry;
  a.rnr_retry = rnr_retry;
  a.sq_psn = 0;
  a.max_rd_atomic = 1;
  return ibv_modify_qp(qp, &a, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT |
                                   IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN | IBV_QP_MAX_QP_RD_ATOMIC);
}

/* a and b created, connected both ways, in RTS */
static int pair_up(struct end *a, struct end *b, int min_rnr, int rnr_retry) {
  if (make_end(a, 64) || make_end(b, 64)) return -1;
  if (to_init(a->qp) || to_init(b->qp)) return -1;
  if (to_rtr(a->qp, b->qp->qp_num, min_rnr) || to_rtr(b->qp, a->qp->qp_num, min_rnr)) return -1;
  if (to_rts(a->qp, 14, 7, rnr_retry) || to_rts(b->qp, 14, 7, rnr_retry)) return -1;
  return 0;
}

static int post_send(struct ibv_qp *qp, enum ibv_wr_opcode op, struct ibv_mr *mr, void *addr,
                     uint32_t len, int flags, uint64_t raddr, uint32_t rkey) {
  struct ibv_sge s = {(uintptr_t)addr, len, mr->lkey};
  struct ibv_send_wr w = {0}, *bad;
  w.wr_id = 1;
  w.sg_list = &s;
  w.num_sge = 1;
  w.opcode = op;
  w.send_flags = IBV_SEND_SIGNALED | flags;
  w.wr.rdma.remote_addr = raddr;
  w.wr.rdma.rkey = rkey;
  return ibv_post_send(qp, &w, &bad);
}

static int post_recv(struct ibv_qp *qp, struct ibv_mr *mr, void *addr, uint32_t len) {
  struct ibv_sge s = {(uintptr_t)addr, len, mr->lkey};
  struct ibv_recv_wr w = {0}, *bad;
  w.wr_id = 2;
  w.sg_list = &s;
  w.num_sge = 1;
  return ibv_post_recv(qp, &w, &bad);
}

/* 1 and *wc when a completion came within `seconds`, 0 when none, -1 on a poll error */
static int poll_for(struct ibv_cq *cq, struct ibv_wc *wc, double seconds) {
  double end = now() + seconds;
  for (;;) {
    int n = ibv_poll_cq(cq, 1, wc);
    if (n) return n < 0 ? -1 : 1;
    if (now() > end) return 0;
    struct timespec t = {0, 100000};
    nanosleep(&t, NULL);
  }
}

static const char *rc_name(int rc) {
  static char b[64];
  if (rc == 0) return "0";
  snprintf(b, sizeof b, "%s", strerrorname_np(rc) ? strerrorname_np(rc) : "error");
  return b;
}

static void info(void) {
  struct ibv_device_attr d;
  struct ibv_port_attr p;
  if (ibv_query_device(ctx, &d) || ibv_query_port(ctx, 1, &p)) {
    check("query", 0, "ibv_query_device/port failed");
    return;
  }
  mtu = p.active_mtu;
  printf("PROBE limit_max_qp_wr: %d\n", d.max_qp_wr);
  printf("PROBE limit_max_sge: %d\n", d.max_sge);
  printf("PROBE limit_max_qp_rd_atom: %d\n", d.max_qp_rd_atom);
  printf("PROBE limit_max_mr_size: %llu\n", (unsigned long long)d.max_mr_size);
  printf("PROBE link_layer: %s\n", p.link_layer == IBV_LINK_LAYER_ETHERNET ? "Ethernet" : "InfiniBand");
  printf("PROBE active_mtu: %d\n", 128 << p.active_mtu);
  printf("PROBE max_mtu: %d\n", 128 << p.max_mtu);
  printf("PROBE atomic_cap: %s\n", d.atomic_cap == IBV_ATOMIC_NONE ? "none" :
                                   d.atomic_cap == IBV_ATOMIC_HCA ? "hca" : "glob");
  struct end e = {0};
  if (make_end(&e, 64) == 0) {
    struct ibv_qp_attr a;
    struct ibv_qp_init_attr ia;
    if (ibv_query_qp(e.qp, &a, IBV_QP_CAP, &ia) == 0)
      printf("PROBE limit_max_inline_data(asked 64): %u\n", a.cap.max_inline_data);
  }
  free_end(&e);
}

/* A SEND posted while the QP is in INIT (or RTR): refused or taken, does it run once the QP is in
 * RTS, or only when the next post rings the doorbell? */
static void post_before_rts(enum ibv_qp_state at) {
  const char *name = at == IBV_QPS_INIT ? "post_send_in_init" : "post_send_in_rtr";
  struct end a = {0}, b = {0};
  struct ibv_wc wc;
  if (make_end(&a, 64) || make_end(&b, 64) || to_init(a.qp) || to_init(b.qp) ||
      post_recv(b.qp, mr_b, buf_b, 64) || post_recv(b.qp, mr_b, buf_b + 64, 64)) {
    check(name, 0, "setup failed");
    goto out;
  }
  if (at == IBV_QPS_RTR && (to_rtr(a.qp, b.qp->qp_num, 1) || to_rtr(b.qp, a.qp->qp_num, 1))) {
    check(name, 0, "setup failed");
    goto out;
  }
  int rc = post_send(a.qp, IBV_WR_SEND, mr_a, buf_a, 16, 0, 0, 0);
  if ((at == IBV_QPS_INIT && (to_rtr(a.qp, b.qp->qp_num, 1) || to_rtr(b.qp, a.qp->qp_num, 1))) ||
      to_rts(a.qp, 14, 7, 7) || to_rts(b.qp, 14, 7, 7)) {
    check(name, 0, "setup failed");
    goto out;
  }
  /* deliveries before and after a second, valid post */
  int before = 0, after = 0, sends = 0;
  while (poll_for(b.cq, &wc, before ? 0.2 : 1.0) == 1) before++;
  while (poll_for(a.cq, &wc, 0.01) == 1) sends++;
  int rc2 = post_send(a.qp, IBV_WR_SEND, mr_a, buf_a, 16, 0, 0, 0);
  while (poll_for(b.cq, &wc, after ? 0.2 : 2.0) == 1) after++;
  while (poll_for(a.cq, &wc, 0.2) == 1) sends++;
  const char *what;
  if (before >= 1) what = "the early SEND is delivered once the QP reaches RTS";
  else if (rc2 == 0 && after >= 2) what = "the early SEND is delivered with the next post (its doorbell)";
  else if (rc2 == 0 && after == 1) what = "the early SEND never runs";
  else what = "the next post does not run either";
  printf("PROBE %s: post returns %s; %s\n", name, rc_name(rc), what);
  if (rc != 0 && before + after > 1)
    printf("PROBE %s_refused_but_ran: yes (%d deliveries, %d send completions for 1 accepted post)\n",
           name, before + after, sends);
out:
  free_end(&a);
  free_end(&b);
}

/* A SEND to a QP number that no longer exists: when (if ever) does the requester hear of it? */
static void send_to_missing_qp(int timeout, int retry, double wait) {
  struct end a = {0}, b = {0};
  struct ibv_wc wc;
  char name[96];
  snprintf(name, sizeof name, "send_to_missing_qp(timeout=%d,retry_cnt=%d)", timeout, retry);
  if (make_end(&a, 64) || make_end(&b, 64) || to_init(a.qp) ||
      to_rtr(a.qp, b.qp->qp_num, 1) || to_rts(a.qp, timeout, retry, 1)) {
    check(name, 0, "setup failed");
    goto out;
  }
  free_end(&b);
  double t0 = now();
  int rc = post_send(a.qp, IBV_WR_SEND, mr_a, buf_a, 16, 0, 0, 0);
  int n = rc ? 0 : poll_for(a.cq, &wc, wait);
  if (rc)
    printf("PROBE %s: post returns %s\n", name, rc_name(rc));
  else if (n == 1)
    printf("PROBE %s: %s after %.1f s\n", name, ibv_wc_status_str(wc.status), now() - t0);
  else
    printf("PROBE %s: no completion within %.0f s\n", name, wait);
out:
  free_end(&a);
  free_end(&b);
}

/* spec-fixed errors: out-of-bounds RDMA READ, a receive too small, RNR retries exhausted */
static void remote_errors(void) {
  struct end a = {0}, b = {0};
  struct ibv_wc wa, wb;
  if (pair_up(&a, &b, 1, 7)) { check("read_out_of_bounds", 0, "setup failed"); goto next; }
  int rc = post_send(a.qp, IBV_WR_RDMA_READ, mr_a, buf_a, 8192, 0, (uintptr_t)buf_b, mr_small->rkey);
  int n = rc ? 0 : poll_for(a.cq, &wa, 5.0);
  printf("PROBE read_out_of_bounds: %s\n", rc ? rc_name(rc) : n == 1 ? ibv_wc_status_str(wa.status) : "no completion in 5 s");
  check("read_out_of_bounds", n == 1 && wa.status == IBV_WC_REM_ACCESS_ERR, "(want remote access error)");
next:
  free_end(&a);
  free_end(&b);
  if (pair_up(&a, &b, 1, 7) || post_recv(b.qp, mr_b, buf_b, 16)) { check("recv_too_small", 0, "setup failed"); goto next2; }
  rc = post_send(a.qp, IBV_WR_SEND, mr_a, buf_a, 64, 0, 0, 0);
  n = rc ? 0 : poll_for(a.cq, &wa, 5.0);
  int m = poll_for(b.cq, &wb, 1.0);
  printf("PROBE recv_too_small: requester %s, responder %s\n",
         n == 1 ? ibv_wc_status_str(wa.status) : "no completion",
         m == 1 ? ibv_wc_status_str(wb.status) : "no completion");
  /* the spec says REM_INV_REQ_ERR / LOC_LEN_ERR; rxe reports other errors: any error will do */
  check("recv_too_small", n == 1 && wa.status != IBV_WC_SUCCESS && m == 1 &&
        wb.status != IBV_WC_SUCCESS, "(want an error completion on both sides)");
next2:
  free_end(&a);
  free_end(&b);
  if (pair_up(&a, &b, 1, 1)) { check("rnr_retry_exceeded", 0, "setup failed"); goto out; }
  double t0 = now();
  rc = post_send(a.qp, IBV_WR_SEND, mr_a, buf_a, 16, 0, 0, 0);
  n = rc ? 0 : poll_for(a.cq, &wa, 10.0);
  printf("PROBE rnr_retry_exceeded(min_rnr_timer=1,rnr_retry=1): %s after %.1f s\n",
         n == 1 ? ibv_wc_status_str(wa.status) : "no completion", now() - t0);
  check("rnr_retry_exceeded", n == 1 && wa.status == IBV_WC_RNR_RETRY_EXC_ERR, "(want RNR retry exceeded)");
  /* inline data longer than the QP's max_inline_data: refused at post */
  struct ibv_qp_attr qa;
  struct ibv_qp_init_attr qi;
  if (ibv_query_qp(b.qp, &qa, IBV_QP_CAP, &qi) == 0) {
    rc = post_send(b.qp, IBV_WR_SEND, mr_b, buf_b, qa.cap.max_inline_data + 1, IBV_SEND_INLINE, 0, 0);
    printf("PROBE inline_over_max: post returns %s\n", rc_name(rc));
  }
out:
  free_end(&a);
  free_end(&b);
}

int main(int argc, char **argv) {
  const char *dev_name = NULL;
  double wait = 20;
  int opt;
  setvbuf(stdout, NULL, _IOLBF, 0);
  while ((opt = getopt(argc, argv, "d:g:w:")) != -1) {
    switch (opt) {
      case 'd': dev_name = optarg; break;
      case 'g': gid_index = atoi(optarg); break;
      case 'w': wait = atof(optarg); break;
      default: fprintf(stderr, "usage: %s [-d DEVICE] [-g GID_INDEX] [-w SECONDS]\n", argv[0]); return 2;
    }
  }
  int n = 0;
  struct ibv_device **list = ibv_get_device_list(&n);
  struct ibv_device *dev = NULL;
  for (int i = 0; list && i < n; i++)
    if (!dev_name || strcmp(ibv_get_device_name(list[i]), dev_name) == 0) { dev = list[i]; break; }
  if (!dev) {
    printf("FAIL verbs_probe: no device %s\n", dev_name ? dev_name : "");
    ibv_free_device_list(list);
    return 1;
  }
  ctx = ibv_open_device(dev);
  char name[64];
  snprintf(name, sizeof name, "%s", ibv_get_device_name(dev));
  ibv_free_device_list(list);  /* the opened context keeps its device (ibv_get_device_list(3)) */
  pd = ctx ? ibv_alloc_pd(ctx) : NULL;
  int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_READ | IBV_ACCESS_REMOTE_WRITE;
  mr_a = pd ? ibv_reg_mr(pd, buf_a, sizeof buf_a, access) : NULL;
  mr_b = pd ? ibv_reg_mr(pd, buf_b, sizeof buf_b, access) : NULL;
  mr_small = pd ? ibv_reg_mr(pd, buf_b, 4096, access) : NULL;
  if (!mr_a || !mr_b || !mr_small || ibv_query_gid(ctx, 1, gid_index, &gid)) {
    printf("FAIL verbs_probe: cannot open %s (pd, mr, gid %d)\n", name, gid_index);
    return 1;
  }
  printf("DEVICE %s\n", ibv_get_device_name(ctx->device));
  info();
  post_before_rts(IBV_QPS_INIT);
  post_before_rts(IBV_QPS_RTR);
  remote_errors();
  send_to_missing_qp(8, 1, wait);
  send_to_missing_qp(14, 7, wait);
  printf("%s verbs_probe (%d wrong)\n", failures ? "FAIL" : "PASS", failures);
  return failures ? 1 : 0;
}
