/*
 * Eager messages of every size class of the verbs transport, fanned in to one rank from all
 * others (8 ranks: 7 senders into rank 0's shared receive queues). Each sender isends --count
 * messages whose sizes step through every class boundary of RRT_IB_EAGER_CLASSES (each given
 * boundary B: B-40 .. B+8 bytes of payload, so the wire size with rrt's headers crosses it),
 * up to the eager limit; rank 0 stays away from progress for a moment first, so the senders
 * run out of credits in every class and queue. Then rank 0 receives each source's messages in
 * order and checks size and content (order across the per-class QPs is restored).
 * On the software RDMA device each rank then checks that its device sent no RNR NAK: credits
 * kept every SEND from meeting an empty receive queue.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <unistd.h>

#include "mp_util.h"

#define TAG_DATA 5
#define MAX_SIZES 256

static size_t sizes[MAX_SIZES];
static int nsizes = 0;

static void add(size_t n, size_t limit) {
  if (n <= limit && nsizes < MAX_SIZES) sizes[nsizes++] = n;
}

/* The boundaries from RRT_IB_EAGER_CLASSES ("256,2K,8256"), else 1K and 8K. */
static void plan(size_t limit) {
  size_t b[8];
  int nb = 0;
  const char *v = getenv("RRT_IB_EAGER_CLASSES");
  if (v && strcmp(v, "auto") != 0) {
    char buf[128];
    snprintf(buf, sizeof buf, "%s", v);
    for (char *tok = strtok(buf, ","); tok && nb < 8; tok = strtok(NULL, ","))
      if (mp_parse_size(tok, &b[nb])) ++nb;
  } else {
    b[nb++] = 1024;
    b[nb++] = 8192;
  }
  add(0, limit);
  add(1, limit);
  add(8, limit);
  for (int i = 0; i < nb; ++i)
    for (size_t d = 0; d <= 48; d += 4) add(b[i] >= 40 ? b[i] - 40 + d : d, limit);
  add(limit, limit);
}

static size_t msg_size(int i) { return sizes[i % nsizes]; }

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t limit = mp_eager_limit();
  if (limit > 65536) limit = 65536;
  plan(limit);
  int count = (int)mp_arg_size(argc, argv, "--count", (size_t)(2 * nsizes));

  if (mp_rank != 0) {
    unsigned char **sb = (unsigned char **)mp_alloc(sizeof(void *) * (size_t)count);
    rrt_request_t *req = (rrt_request_t *)mp_alloc(sizeof(rrt_request_t) * (size_t)count);
    for (int i = 0; i < count; ++i) {
      sb[i] = (unsigned char *)mp_alloc(msg_size(i) + 1);
      mp_fill(sb[i], msg_size(i), mp_seed(mp_rank, 0, TAG_DATA, (uint64_t)i));
      MP_CALL(rrt_isend(sb[i], msg_size(i), RRT_BYTE, 0, TAG_DATA, RRT_COMM_WORLD, &req[i]));
    }
    MP_CALL(rrt_waitall((size_t)count, req, RRT_STATUSES_IGNORE));
    for (int i = 0; i < count; ++i) free(sb[i]);
    free(sb);
    free(req);
  } else {
    /* Let the senders fill every class before the first poll (not needed for correctness). */
    usleep(200000);
    unsigned char *rb = (unsigned char *)mp_alloc(limit + 1);
    for (int i = 0; i < count; ++i)
      for (int src = 1; src < mp_size; ++src) {
        rrt_status_t st;
        MP_CALL(rrt_recv(rb, limit + 1, RRT_BYTE, src, TAG_DATA, RRT_COMM_WORLD, &st));
        MP_EXPECT(st.bytes == msg_size(i), "from %d #%d: %zu bytes, want %zu (out of order?)",
                  src, i, st.bytes, msg_size(i));
        if (st.bytes == msg_size(i)) {
          size_t bad = mp_first_mismatch(rb, st.bytes, mp_seed(src, 0, TAG_DATA, (uint64_t)i));
          MP_EXPECT(bad == (size_t)-1, "from %d #%d (%zu bytes): differs at byte %zu", src, i,
                    st.bytes, bad);
        }
      }
    free(rb);
  }
  mp_sync();
  const char *tr = getenv("RRT_TRANSPORTS");
  if (tr && strstr(tr, "verbs")) {
    unsigned long long (*naks)(void) =
        (unsigned long long (*)(void))dlsym(RTLD_DEFAULT, "softrdma_rnr_naks_sent");
    if (naks) MP_EXPECT(naks() == 0, "%llu RNR NAKs: a SEND met an empty receive queue", naks());
  }
  return mp_finish("p2p_eager_classes");
}
