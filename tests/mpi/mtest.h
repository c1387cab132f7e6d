/* Helpers of the MPI test programs. They are plain MPI (no rrt headers), so the same source
 * builds with rrtmpicc and with Open MPI's or MPICH's mpicc; rank 0 prints results that must
 * be identical under every implementation (the control comparison), and every rank counts its
 * failed checks, summed at the end into "errors=N". */
#ifndef MTEST_H
#define MTEST_H

#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int mt_errors = 0;
static int mt_rank_ = -1;

#define CHECK(cond)                                                                        \
  do {                                                                                     \
    if (!(cond)) {                                                                         \
      mt_errors++;                                                                         \
      fprintf(stderr, "[rank %d] %s:%d: check failed: %s\n", mt_rank_, __FILE__, __LINE__, \
              #cond);                                                                      \
    }                                                                                      \
  } while (0)

/* Rank 0 prints a result line (part of the compared output). */
static inline void say(const char *fmt, ...) {
  if (mt_rank_ != 0) return;
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
}

static inline void mt_init(int *argc, char ***argv) {
  MPI_Init(argc, argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &mt_rank_);
}

static inline int mt_finish(void) {
  int total = 0;
  MPI_Allreduce(&mt_errors, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  say("errors=%d", total);
  MPI_Finalize();
  return total != 0;
}

#endif
