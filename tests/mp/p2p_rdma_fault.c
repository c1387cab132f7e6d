/* p2p_rdma_fault: one rendezvous transfer fails in the middle of the protocol, and both sides
 * must hear of it. Run over the software RDMA device with SOFTRDMA_FAULT (tests/softrdma/fault.h)
 * naming the first RDMA READ (RRT_RNDV_PROTO=get: the receiver's read fails) or the first RDMA
 * WRITE (RRT_RNDV_PROTO=put: the sender's write fails). Rank 0 sends 256 KiB to rank 1; both
 * calls must return an error — neither may report success (the receive's data never arrived)
 * nor hang (the line's timeout fails the test). Each rank checks its own call and exits non-zero
 * on a wrong result; rank 0 prints "PASS p2p_rdma_fault (2 ranks)" when its own call was right.
 * The job is broken afterwards: the ranks leave without finalize. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rrt/rrt.h>

int main(int argc, char **argv) {
  rrt_init(&argc, &argv);
  /* errors back from the calls, not a job abort, when the failed transfer fails the peer
   * (RRT_PEER_FAILURE=auto) */
  rrt_comm_set_errhandler(RRT_COMM_WORLD, RRT_ERRORS_RETURN);
  int rank, size;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  if (size != 2) {
    printf("FAIL p2p_rdma_fault: needs 2 ranks\n");
    return 1;
  }
  static char buf[256 * 1024];
  memset(buf, rank == 0 ? 0x5a : 0, sizeof buf);
  rrt_barrier(RRT_COMM_WORLD); /* connected, and no RDMA READ/WRITE yet */
  int rc;
  if (rank == 0)
    rc = rrt_send(buf, sizeof buf, RRT_BYTE, 1, 7, RRT_COMM_WORLD);
  else
    rc = rrt_recv(buf, sizeof buf, RRT_BYTE, 0, 7, RRT_COMM_WORLD, RRT_STATUS_IGNORE);
  const char *call = rank == 0 ? "rrt_send" : "rrt_recv";
  if (rc == RRT_SUCCESS) {
    printf("FAIL p2p_rdma_fault: rank %d: %s returned RRT_SUCCESS after its transfer failed\n", rank,
           call);
    fflush(stdout);
    _exit(1);
  }
  printf("rank %d: %s returned %d (%s)\n", rank, call, rc, rrt_strerror(rc));
  if (rank == 0) printf("PASS p2p_rdma_fault (%d ranks)\n", size);
  fflush(stdout);
  _exit(0);
}
