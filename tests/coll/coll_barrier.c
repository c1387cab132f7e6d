/* The barrier property across processes, whatever algorithm RRT_COLL_BARRIER forces: no rank
 * leaves a barrier before the last one entered it. In round i rank i mod p is late: it sleeps,
 * then creates a marker file, then enters; every rank checks after the barrier that the marker
 * exists (a file system call completed before the late rank entered is seen by anyone who
 * leaves after it entered; no timing decides the outcome). Rounds also run back to back with
 * no late rank, on the world and on a split communicator.
 *
 * Prints "PASS coll_barrier (N ranks)" on rank 0, "FAIL ..." lines otherwise. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <rrt/rrt.h>

static int failures = 0;

static void rounds(rrt_comm_t comm, const char* dir, const char* what) {
  int rank, size;
  rrt_comm_rank(comm, &rank);
  rrt_comm_size(comm, &size);
  for (int i = 0; i < 3 * size; i++) {
    char marker[512];
    snprintf(marker, sizeof marker, "%s/%s-%d", dir, what, i);
    if (rank == i % size) {
      usleep(3000);
      FILE* f = fopen(marker, "w");
      if (!f) {
        printf("FAIL rank %d: cannot create %s\n", rank, marker);
        failures++;
      } else {
        fclose(f);
      }
    }
    int rc = rrt_barrier(comm);
    if (rc != RRT_SUCCESS) {
      printf("FAIL rank %d: %s barrier %d: %s\n", rank, what, i, rrt_strerror(rc));
      failures++;
    } else if (access(marker, F_OK) != 0) {
      printf("FAIL rank %d: left %s barrier %d before rank %d entered\n", rank, what, i, i % size);
      failures++;
    }
  }
  for (int i = 0; i < 1000; i++)
    if (rrt_barrier(comm) != RRT_SUCCESS) {
      printf("FAIL rank %d: %s back-to-back barrier %d\n", rank, what, i);
      failures++;
      break;
    }
}

int main(int argc, char** argv) {
  if (rrt_init(&argc, &argv) != RRT_SUCCESS) return 1;
  int rank, size;
  rrt_comm_rank(RRT_COMM_WORLD, &rank);
  rrt_comm_size(RRT_COMM_WORLD, &size);
  /* Rank 0 makes the directory and tells the others its name. */
  char dir[256] = "";
  if (rank == 0) {
    const char* tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/coll_barrier-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
      printf("FAIL: mkdtemp %s\n", dir);
      dir[0] = '\0';
    }
  }
  if (rrt_bcast(dir, sizeof dir, RRT_CHAR, 0, RRT_COMM_WORLD) != RRT_SUCCESS || !dir[0]) {
    printf("FAIL rank %d: no directory\n", rank);
    rrt_finalize();
    return 1;
  }
  rounds(RRT_COMM_WORLD, dir, "world");
  rrt_comm_t half;
  if (rrt_comm_split(RRT_COMM_WORLD, rank % 2, rank, &half) != RRT_SUCCESS) {
    printf("FAIL rank %d: split\n", rank);
    failures++;
  } else {
    char what[32];
    snprintf(what, sizeof what, "half%d", rank % 2);
    rounds(half, dir, what);
    rrt_comm_free(&half);
  }
  int total = 0;
  rrt_allreduce(&failures, &total, 1, RRT_INT32, RRT_SUM, RRT_COMM_WORLD);
  if (rank == 0) {
    char cmd[300];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) printf("warning: could not remove %s\n", dir);
    if (total == 0) printf("PASS coll_barrier (%d ranks)\n", size);
  }
  rrt_finalize();
  return total == 0 ? 0 : 1;
}
