/* p2p_tcp_peer_exit: the last rank vanishes mid-job (_exit without finalize, its sockets reset
 * by the kernel) while every other rank is blocked in a receive from it and in a rendezvous
 * send to it. Those calls must return RRT_ERR_PROC_FAILED (not hang). Rank 0 prints
 * "PASS p2p_tcp_peer_exit (N ranks)" when every survivor saw the error; then the survivors
 * leave without finalize too (the job is broken). The program sets RRT_ERRORS_RETURN on
 * RRT_COMM_WORLD, so rrt fails the calls instead of aborting the job (RRT_PEER_FAILURE=auto).
 * With --abort it leaves the handler alone: then the first survivor to find the victim gone
 * must have the launcher end the job (exit status 14, RRT_ERR_PROC_FAILED), so no survivor
 * gets as far as printing "SURVIVED". Driven by tcp_peer_exit.sh. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rrt/rrt.h>

int main(int argc, char **argv) {
  rrt_init(&argc, &argv);
  const int abortMode = argc > 1 && strcmp(argv[1], "--abort") == 0;
  if (!abortMode) rrt_comm_set_errhandler(RRT_COMM_WORLD, RRT_ERRORS_RETURN);
  int rank, size;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  const int victim = size - 1;
  static char buf[1 << 20];
  /* connections up everywhere first */
  rrt_barrier(RRT_COMM_WORLD);
  int x = 0;
  if (rank == victim) {
    /* Synchronous sends: the victim leaves only once every survivor has matched, so its last
     * barrier messages (on the same connection, before these) were read, not lost in its send
     * queue at _exit. A lost one made that survivor's barrier fail and skip its own last send,
     * and the survivor waiting on that send hung in the barrier (CI, a loaded machine). */
    for (int r = 0; r < victim; ++r) rrt_ssend(&x, 1, RRT_INT32, r, 1, RRT_COMM_WORLD);
    _exit(0);
  }
  rrt_recv(&x, 1, RRT_INT32, victim, 1, RRT_COMM_WORLD, RRT_STATUS_IGNORE);
  /* The failure may be known before the calls are posted (a loaded machine, or a transport that
   * hears of it at once): then the post itself returns the error and makes no request. */
  rrt_request_t rq[2] = {RRT_REQUEST_NULL, RRT_REQUEST_NULL};
  int e0 = rrt_irecv(&x, 1, RRT_INT32, victim, 2, RRT_COMM_WORLD, &rq[0]);
  int e1 = rrt_isend(buf, sizeof buf, RRT_BYTE, victim, 3, RRT_COMM_WORLD, &rq[1]);
  if (e0 == RRT_SUCCESS) e0 = rrt_wait(&rq[0], RRT_STATUS_IGNORE);
  if (e1 == RRT_SUCCESS) e1 = rrt_wait(&rq[1], RRT_STATUS_IGNORE);
  if (abortMode) {
    printf("SURVIVED p2p_tcp_peer_exit: rank %d got %d / %d\n", rank, e0, e1);
    fflush(stdout);
    _exit(0);
  }
  int good = e0 == RRT_ERR_PROC_FAILED && e1 == RRT_ERR_PROC_FAILED;
  if (!good) printf("FAIL p2p_tcp_peer_exit: rank %d got %d / %d\n", rank, e0, e1);
  /* survivors agree among themselves (they are still connected); a synchronous send, so that
   * no survivor leaves (and resets its connection) before rank 0 has its verdict */
  if (rank == 0) {
    int all = good;
    for (int r = 1; r < victim; ++r) {
      int g = 0;
      int e = rrt_recv(&g, 1, RRT_INT32, r, 9, RRT_COMM_WORLD, RRT_STATUS_IGNORE);
      if (e != RRT_SUCCESS) printf("FAIL p2p_tcp_peer_exit: no verdict from rank %d: %d\n", r, e);
      all &= g;
    }
    if (all) printf("PASS p2p_tcp_peer_exit (%d ranks)\n", size);
  } else {
    rrt_ssend(&good, 1, RRT_INT32, 0, 9, RRT_COMM_WORLD);
  }
  fflush(stdout);
  _exit(good ? 0 : 1);
}
