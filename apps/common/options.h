/*
 * Options, defaults and output of the microbenchmarks, shared by the rrt apps (apps/) and their MPI
 * counterparts (bench/mpi/), so that both take the same flags and print the same columns as OSU
 * Micro-Benchmarks 7. Plain C with no runtime calls: mpicc builds it too.
 *
 * Lifecycle: bench_parse() before the runtime starts (it never prints); the caller prints the
 * outcome (usage, error) on rank 0 only, once it knows its rank.
 */
#ifndef RRT_APPS_COMMON_OPTIONS_H
#define RRT_APPS_COMMON_OPTIONS_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

enum bench_kind {
  BENCH_LATENCY, /* ping-pong between two ranks */
  BENCH_BW,      /* windows of messages, one direction or both */
  BENCH_COLL,    /* a collective over sizes */
  BENCH_BARRIER  /* a collective without a size */
};

/* -T: the element type of collectives (sizes stay in bytes; count = size / element size). */
enum bench_dtype { BENCH_CHAR, BENCH_INT, BENCH_FLOAT, BENCH_DOUBLE, BENCH_FP16, BENCH_BF16 };

/* -d: where the buffers live. With -d cuda the point-to-point tests take two more arguments, the
 * buffer kind of rank 0 and rank 1 (H or D, default D D), as OSU's "-d cuda D D". */
enum bench_device { BENCH_DEV_HOST, BENCH_DEV_CUDA };

struct bench_options {
  enum bench_kind kind;
  size_t min_size, max_size;
  size_t iters, iters_large; /* iterations below / above kBenchLargeSize */
  size_t skip, skip_large;   /* warm-up iterations, likewise */
  size_t window;             /* -W, bandwidth tests */
  int full;                  /* -f: min / max / iterations columns */
  enum bench_dtype dtype;
  enum bench_device device;
  int device_buf[2]; /* -d cuda, point-to-point: rank 0's / rank 1's buffers on the device */
  int lib_alloc;     /* -a, collectives: host buffers from the runtime's allocator
                        (rrt_alloc_mem, MPI_Alloc_mem) instead of malloc */
};

enum bench_parse_result { BENCH_RUN, BENCH_HELP, BENCH_BAD_USAGE };

/* Sizes above this use iters_large / skip_large unless -i / -x were given (as in OSU). */
#define BENCH_LARGE_SIZE 8192

/* Fills opts with the OSU defaults for kind, then applies argv. On BENCH_BAD_USAGE, error (of
 * errlen bytes) says why. */
enum bench_parse_result bench_parse(int argc, char **argv, enum bench_kind kind,
                                    struct bench_options *opts, char *error, size_t errlen);
void bench_usage(FILE *out, const char *program, enum bench_kind kind);
/* bench_parse for a benchmark's main: prints help or the usage error (rank 0 only). Returns -1
 * to go on, else the exit status (0 after help, 1 after a usage error). */
int bench_start(int argc, char **argv, enum bench_kind kind, const char *program, int rank,
                struct bench_options *opts);

size_t bench_iters(const struct bench_options *opts, size_t size);
size_t bench_skip(const struct bench_options *opts, size_t size);

size_t bench_dtype_size(enum bench_dtype dtype);
const char *bench_dtype_name(enum bench_dtype dtype); /* "FLOAT", "BFLOAT16", ... */

/* Output, rank 0 only. title: "rrt Latency Test v0.1"; type_prefix: "RRT_" or "MPI_". */
void bench_print_title(const char *title);
void bench_print_pt2pt_header(enum bench_kind kind);
void bench_print_pt2pt_row(size_t size, double value);
void bench_print_coll_header(const struct bench_options *opts, const char *type_prefix);
void bench_print_coll_row(const struct bench_options *opts, size_t size, double avg, double min,
                          double max, size_t iters);

/* -d cuda: the runtime's answer (NULL = device buffers work), or a reason for a NULL callback. */
const char *bench_device_check(const char *(*device_unavailable)(void));
/* -d cuda without usable device buffers: rank 0 says why; returns 1 (the caller then exits with
 * DEVICE_SKIP_EXIT). 0 when the benchmark can run. */
int bench_device_skip(const char *(*device_unavailable)(void), const char *program, int rank);


#ifdef __cplusplus
}
#endif

#endif /* RRT_APPS_COMMON_OPTIONS_H */
