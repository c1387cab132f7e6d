/* Options, defaults and output shared by the rrt microbenchmarks and their MPI counterparts. */
#include "options.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define FIELD_WIDTH 20 /* OSU's column width */
#define SIZE_WIDTH 10

/* OSU Micro-Benchmarks 7 defaults, per kind. */
static const struct bench_options kDefaults[] = {
    [BENCH_LATENCY] = {BENCH_LATENCY, 0, 1u << 22, 10000, 1000, 100, 10, 0, 0, BENCH_CHAR},
    [BENCH_BW] = {BENCH_BW, 1, 1u << 22, 100, 20, 10, 2, 64, 0, BENCH_CHAR},
    [BENCH_COLL] = {BENCH_COLL, 1, 1u << 20, 1000, 100, 100, 10, 0, 0, BENCH_CHAR},
    [BENCH_BARRIER] = {BENCH_BARRIER, 0, 0, 1000, 1000, 100, 100, 0, 0, BENCH_CHAR},
};

static const struct {
  const char *flag;
  enum bench_dtype dtype;
  size_t size;
  const char *name;
} kTypes[] = {
    {"char", BENCH_CHAR, 1, "CHAR"},       {"int", BENCH_INT, 4, "INT32"},
    {"float", BENCH_FLOAT, 4, "FLOAT"},    {"double", BENCH_DOUBLE, 8, "DOUBLE"},
    {"fp16", BENCH_FP16, 2, "FLOAT16"},    {"bf16", BENCH_BF16, 2, "BFLOAT16"},
    {"float16", BENCH_FP16, 2, "FLOAT16"}, {"bfloat16", BENCH_BF16, 2, "BFLOAT16"},
};
#define NTYPES (sizeof(kTypes) / sizeof(kTypes[0]))

static const char *optstring(enum bench_kind kind) {
  switch (kind) {
    case BENCH_LATENCY: return "+hm:i:x:d:";
    case BENCH_BW: return "+hm:i:x:W:d:";
    case BENCH_COLL: return "+hm:i:x:fT:d:a";
    case BENCH_BARRIER: return "+hi:x:fd:";
  }
  return "";
}

/* Accepts decimal only, and all of the text. */
static int parse_size(const char *text, size_t *out) {
  char *end = NULL;
  errno = 0;
  unsigned long long v = strtoull(text, &end, 10);
  if (errno || end == text || *end != '\0' || text[0] == '-') return -1;
  *out = (size_t)v;
  return 0;
}

/* -m MAX, -m MIN:MAX, -m MIN: or -m :MAX, as OSU reads it. */
static int parse_range(char *text, struct bench_options *opts) {
  char *colon = strchr(text, ':');
  if (!colon) return parse_size(text, &opts->max_size);
  *colon = '\0';
  if (*text && parse_size(text, &opts->min_size)) return -1;
  if (colon[1] && parse_size(colon + 1, &opts->max_size)) return -1;
  return 0;
}

enum bench_parse_result bench_parse(int argc, char **argv, enum bench_kind kind,
                                    struct bench_options *opts, char *error, size_t errlen) {
  *opts = kDefaults[kind];
  opterr = 0; /* the caller reports, on rank 0 only */
  optind = 1;
  int opt;
  while ((opt = getopt(argc, argv, optstring(kind))) != -1) {
    size_t n = 0;
    switch (opt) {
      case 'h': return BENCH_HELP;
      case 'm':
        if (parse_range(optarg, opts)) {
          snprintf(error, errlen, "invalid message size range (-m MIN:MAX or -m MAX)");
          return BENCH_BAD_USAGE;
        }
        break;
      case 'i':
        if (parse_size(optarg, &n) || n == 0) {
          snprintf(error, errlen, "invalid iteration count -i %s", optarg);
          return BENCH_BAD_USAGE;
        }
        opts->iters = opts->iters_large = n; /* an explicit count applies to every size */
        break;
      case 'x':
        if (parse_size(optarg, &n)) {
          snprintf(error, errlen, "invalid warm-up count -x %s", optarg);
          return BENCH_BAD_USAGE;
        }
        opts->skip = opts->skip_large = n;
        break;
      case 'W':
        if (parse_size(optarg, &n) || n == 0) {
          snprintf(error, errlen, "invalid window size -W %s", optarg);
          return BENCH_BAD_USAGE;
        }
        opts->window = n;
        break;
      case 'f': opts->full = 1; break;
      case 'a': opts->lib_alloc = 1; break;
      case 'T': {
        size_t t = 0;
        while (t < NTYPES && strcasecmp(optarg, kTypes[t].flag) != 0) ++t;
        if (t == NTYPES) {
          snprintf(error, errlen, "unknown datatype -T %s (char, int, float, double, fp16, bf16)",
                   optarg);
          return BENCH_BAD_USAGE;
        }
        opts->dtype = kTypes[t].dtype;
        break;
      }
      case 'd':
        if (strcmp(optarg, "host") == 0) {
          opts->device = BENCH_DEV_HOST;
        } else if (strcmp(optarg, "cuda") == 0) {
          opts->device = BENCH_DEV_CUDA;
          opts->device_buf[0] = opts->device_buf[1] = 1;
        } else {
          snprintf(error, errlen, "unsupported device -d %s (host or cuda)", optarg);
          return BENCH_BAD_USAGE;
        }
        break;
      default:
        snprintf(error, errlen, "unknown option or missing argument -%c", optopt);
        return BENCH_BAD_USAGE;
    }
  }
  if (opts->device == BENCH_DEV_CUDA && (kind == BENCH_LATENCY || kind == BENCH_BW) &&
      optind < argc) {
    /* OSU's buffer kinds: "-d cuda D H" = rank 0 device, rank 1 host. */
    for (int r = 0; r < 2; ++r) {
      if (optind >= argc || (strcmp(argv[optind], "D") != 0 && strcmp(argv[optind], "H") != 0)) {
        snprintf(error, errlen, "-d cuda takes two buffer kinds, H or D (e.g. -d cuda D D)");
        return BENCH_BAD_USAGE;
      }
      opts->device_buf[r] = argv[optind++][0] == 'D';
    }
  }
  if (optind < argc) {
    snprintf(error, errlen, "unexpected argument '%s'", argv[optind]);
    return BENCH_BAD_USAGE;
  }
  if (opts->min_size > opts->max_size) {
    snprintf(error, errlen, "minimum message size %zu exceeds the maximum %zu", opts->min_size,
             opts->max_size);
    return BENCH_BAD_USAGE;
  }
  return BENCH_RUN;
}

void bench_usage(FILE *out, const char *program, enum bench_kind kind) {
  const struct bench_options *d = &kDefaults[kind];
  fprintf(out, "Usage: %s [options]\nOptions:\n", program);
  if (kind != BENCH_BARRIER)
    fprintf(out, "  -m [MIN:]MAX  message sizes in bytes, powers of two (default %zu:%zu)\n",
            d->min_size, d->max_size);
  fprintf(out,
          "  -i ITER       timed iterations (default %zu, %zu above %d bytes)\n"
          "  -x ITER       warm-up iterations (default %zu, %zu above %d bytes)\n",
          d->iters, d->iters_large, BENCH_LARGE_SIZE, d->skip, d->skip_large, BENCH_LARGE_SIZE);
  if (kind == BENCH_BW)
    fprintf(out, "  -W SIZE       messages in flight per iteration (default %zu)\n", d->window);
  if (kind == BENCH_COLL || kind == BENCH_BARRIER)
    fprintf(out, "  -f            also print min and max latency and iterations\n");
  if (kind == BENCH_COLL)
    fprintf(out, "  -T TYPE       element type: char (default), int, float, double, fp16, bf16\n"
                 "  -a            host buffers from the runtime's allocator (rrt_alloc_mem,\n"
                 "                MPI_Alloc_mem) instead of malloc\n");
  if (kind == BENCH_LATENCY || kind == BENCH_BW)
    fprintf(out, "  -d host|cuda [H|D H|D]  buffer memory; with cuda, rank 0's and rank 1's buffers\n"
                 "                (default D D); skipped (exit 77) without a GPU\n");
  else
    fprintf(out, "  -d host|cuda  buffer memory; cuda is skipped (exit 77) without a GPU\n");
  fprintf(out, "  -h            print this help\n");
}

size_t bench_iters(const struct bench_options *opts, size_t size) {
  return size > BENCH_LARGE_SIZE ? opts->iters_large : opts->iters;
}

size_t bench_skip(const struct bench_options *opts, size_t size) {
  return size > BENCH_LARGE_SIZE ? opts->skip_large : opts->skip;
}

size_t bench_dtype_size(enum bench_dtype dtype) {
  for (size_t t = 0; t < NTYPES; ++t)
    if (kTypes[t].dtype == dtype) return kTypes[t].size;
  return 1;
}

const char *bench_dtype_name(enum bench_dtype dtype) {
  for (size_t t = 0; t < NTYPES; ++t)
    if (kTypes[t].dtype == dtype) return kTypes[t].name;
  return "CHAR";
}

void bench_print_title(const char *title) {
  printf("# %s\n", title);
  fflush(stdout);
}

void bench_print_pt2pt_header(enum bench_kind kind) {
  printf("%-*s%*s\n", SIZE_WIDTH, "# Size", FIELD_WIDTH,
         kind == BENCH_LATENCY ? "Latency (us)" : "Bandwidth (MB/s)");
  fflush(stdout);
}

void bench_print_pt2pt_row(size_t size, double value) {
  printf("%-*zu%*.2f\n", SIZE_WIDTH, size, FIELD_WIDTH, value);
  fflush(stdout);
}

void bench_print_coll_header(const struct bench_options *opts, const char *type_prefix) {
  if (opts->kind == BENCH_COLL) {
    printf("# Datatype: %s%s.\n", type_prefix, bench_dtype_name(opts->dtype));
    if (opts->lib_alloc) printf("# Buffers: the runtime's allocator.\n");
    printf("%-*s%*s", SIZE_WIDTH, "# Size", FIELD_WIDTH, "Avg Latency(us)");
  } else {
    printf("# Avg Latency(us)");
  }
  if (opts->full)
    printf("%*s%*s%*s", FIELD_WIDTH, "Min Latency(us)", FIELD_WIDTH, "Max Latency(us)", 12,
           "Iterations");
  printf("\n");
  fflush(stdout);
}

void bench_print_coll_row(const struct bench_options *opts, size_t size, double avg, double min,
                          double max, size_t iters) {
  if (opts->kind == BENCH_COLL)
    printf("%-*zu%*.2f", SIZE_WIDTH, size, FIELD_WIDTH, avg);
  else
    printf("%*.2f", 17, avg);
  if (opts->full) printf("%*.2f%*.2f%*zu", FIELD_WIDTH, min, FIELD_WIDTH, max, 12, iters);
  printf("\n");
  fflush(stdout);
}


int bench_start(int argc, char **argv, enum bench_kind kind, const char *program, int rank,
                struct bench_options *opts) {
  char error[256] = "";
  switch (bench_parse(argc, argv, kind, opts, error, sizeof error)) {
    case BENCH_HELP:
      if (rank == 0) bench_usage(stdout, program, kind);
      return 0;
    case BENCH_BAD_USAGE:
      if (rank == 0) {
        fprintf(stderr, "%s: %s\n\n", program, error);
        bench_usage(stderr, program, kind);
      }
      return 1;
    case BENCH_RUN: break;
  }
  return -1;
}

int bench_device_skip(const char *(*device_unavailable)(void), const char *program, int rank) {
  const char *why = bench_device_check(device_unavailable);
  if (!why) return 0;
  if (rank == 0) {
    printf("# %s: -d cuda: %s: skipped\n", program, why);
    fflush(stdout); /* the launcher may end this rank as soon as a peer exits 77 */
  }
  return 1;
}

const char *bench_device_check(const char *(*device_unavailable)(void)) {
  return device_unavailable ? device_unavailable() : "device buffers not supported by this runtime";
}
