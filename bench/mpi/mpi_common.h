/*
 * The MPI side of the counterparts of rrt's microbenchmarks: each bench/mpi/mpi_<name>.c does what
 * apps/rrt_<name>.cc does, on the same shared frame (apps/common/), so that bench/compare measures
 * the same loops with the same sizes, iterations and windows on rrt, Open MPI and MPICH.
 * Built by bench/compare with each MPI's mpicc; not part of the rrt build.
 */
#ifndef RRT_BENCH_MPI_COMMON_H
#define RRT_BENCH_MPI_COMMON_H

#include <mpi.h>

#include "coll_driver.h"
#include "pt2pt_driver.h"

/* On failure prints "<program>: <what> failed: <MPI error string>" and aborts the job. */
void mpi_check(int rc, const char *what);

/* MPI_DATATYPE_NULL for the half types, which MPI does not have. */
MPI_Datatype mpi_type(enum bench_dtype dtype);

/* MPI_Init, the shared driver on MPI_COMM_WORLD, MPI_Finalize; bench->title is the test's name
 * ("Latency Test"), to which the MPI library's name is added. Return the exit code. */
int mpi_pt2pt_main(int argc, char **argv, struct pt2pt_bench bench);
int mpi_coll_main(int argc, char **argv, struct coll_bench bench);

#endif /* RRT_BENCH_MPI_COMMON_H */
