/* The MPI side of the benchmark counterparts (see mpi_common.h). */
#include "mpi_common.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *g_program = "mpi benchmark";
static char g_title[256];

void mpi_check(int rc, const char *what) {
  if (rc == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  MPI_Error_string(rc, text, &len);
  fprintf(stderr, "%s: %s failed: %s\n", g_program, what, text);
  MPI_Abort(MPI_COMM_WORLD, 1);
  exit(1);
}

MPI_Datatype mpi_type(enum bench_dtype dtype) {
  switch (dtype) {
    case BENCH_CHAR: return MPI_CHAR;
    case BENCH_INT: return MPI_INT32_T;
    case BENCH_FLOAT: return MPI_FLOAT;
    case BENCH_DOUBLE: return MPI_DOUBLE;
    case BENCH_FP16:
    case BENCH_BF16: return MPI_DATATYPE_NULL;
  }
  return MPI_DATATYPE_NULL;
}

/* "MPI <test> (<first line of the library version>)". */
static const char *title(const char *test) {
  char version[MPI_MAX_LIBRARY_VERSION_STRING];
  int len = 0;
  MPI_Get_library_version(version, &len);
  version[strcspn(version, ",\n")] = '\0';
  snprintf(g_title, sizeof g_title, "MPI %s (%.160s)", test, version);
  return g_title;
}

static void init(int *argc, char ***argv, const char *program, int *rank, int *nranks) {
  g_program = program;
  mpi_check(MPI_Init(argc, argv), "MPI_Init");
  mpi_check(MPI_Comm_rank(MPI_COMM_WORLD, rank), "MPI_Comm_rank");
  mpi_check(MPI_Comm_size(MPI_COMM_WORLD, nranks), "MPI_Comm_size");
}

static double wtime(void) { return MPI_Wtime(); }

static void barrier(void) { mpi_check(MPI_Barrier(MPI_COMM_WORLD), "MPI_Barrier"); }

static void reduce_stats(double value, double *min, double *max, double *sum) {
  mpi_check(MPI_Reduce(&value, min, 1, MPI_DOUBLE, MPI_MIN, 0, MPI_COMM_WORLD), "MPI_Reduce(min)");
  mpi_check(MPI_Reduce(&value, max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD), "MPI_Reduce(max)");
  mpi_check(MPI_Reduce(&value, sum, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD), "MPI_Reduce(sum)");
}

static int dtype_supported(enum bench_dtype dtype) { return mpi_type(dtype) != MPI_DATATYPE_NULL; }

static void abort_job(void) { MPI_Abort(MPI_COMM_WORLD, 1); }

static void *alloc_mem(size_t bytes) {
  void *p = NULL;
  return MPI_Alloc_mem((MPI_Aint)bytes, MPI_INFO_NULL, &p) == MPI_SUCCESS ? p : NULL;
}

static void free_mem(void *p) { mpi_check(MPI_Free_mem(p), "MPI_Free_mem"); }

int mpi_pt2pt_main(int argc, char **argv, struct pt2pt_bench bench) {
  struct pt2pt_runtime rt = {0, 0, barrier};
  init(&argc, &argv, bench.program, &rt.rank, &rt.nranks);
  bench.title = title(bench.title);
  int code = pt2pt_main(argc, argv, &rt, &bench);
  mpi_check(MPI_Finalize(), "MPI_Finalize");
  return code;
}

int mpi_coll_main(int argc, char **argv, struct coll_bench bench) {
  struct coll_runtime rt = {.type_prefix = "MPI_",
                            .wtime = wtime,
                            .barrier = barrier,
                            .reduce_stats = reduce_stats,
                            .dtype_supported = dtype_supported,
                            .abort_job = abort_job,
                            .alloc_mem = alloc_mem,
                            .free_mem = free_mem};
  init(&argc, &argv, bench.program, &rt.rank, &rt.nranks);
  bench.title = title(bench.title);
  int code = coll_main(argc, argv, &rt, &bench);
  mpi_check(MPI_Finalize(), "MPI_Finalize");
  return code;
}
