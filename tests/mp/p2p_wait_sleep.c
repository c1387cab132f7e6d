/*
 * A rank blocked in rrt_recv while its peer is busy elsewhere: rank 0 sleeps --delay-ms
 * (outside rrt, so it neither sends nor polls), then sends one message; rank 1 waits for it
 * in rrt_recv and reports the CPU time (getrusage) and wall time its wait took, as an INFO line.
 * The test's verdict on how it waited is not a time: tests/softrdma/verbs_wait.sh reads the
 * RRT_STATS "waits:" line (sleeps in the kernel on the transport's event fd, and how many an
 * event ended) of rank 1.
 */
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "mp_util.h"

static double cpu_s(void) {
  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  return (double)ru.ru_utime.tv_sec + 1e-6 * (double)ru.ru_utime.tv_usec +
         (double)ru.ru_stime.tv_sec + 1e-6 * (double)ru.ru_stime.tv_usec;
}

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

int main(int argc, char **argv) {
  mp_init(&argc, &argv);
  size_t delay = mp_arg_size(argc, argv, "--delay-ms", 300);
  mp_sync(); /* connected both ways */
  int v = 42, got = 0;
  if (mp_rank == 0) {
    struct timespec ts = {(time_t)(delay / 1000), (long)(delay % 1000) * 1000000L};
    nanosleep(&ts, NULL);
    MP_CALL(rrt_send(&v, 1, RRT_INT32, 1, 7, RRT_COMM_WORLD));
  } else if (mp_rank == 1) {
    double c0 = cpu_s(), w0 = wall_s();
    MP_CALL(rrt_recv(&got, 1, RRT_INT32, 0, 7, RRT_COMM_WORLD, RRT_STATUS_IGNORE));
    double c1 = cpu_s(), w1 = wall_s();
    MP_EXPECT(got == 42, "received %d", got);
    printf("INFO p2p_wait_sleep: rank 1 waited %.1f ms wall, %.1f ms CPU\n", 1e3 * (w1 - w0),
           1e3 * (c1 - c0));
  }
  mp_sync();
  return mp_finish("p2p_wait_sleep");
}
