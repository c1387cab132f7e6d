// The rrt side of every microbenchmark (see rrt_check.h).
#include "rrt_check.h"

#include "device_mem.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace rrt::apps {
namespace {
const char* gProgram = "rrt benchmark";
}  // namespace

void setProgram(const char* program) { gProgram = program; }

void check(int rc, const char* what) {
  if (rc == RRT_SUCCESS) return;
  std::fprintf(stderr, "%s: %s failed: %s\n", gProgram, what, rrt_strerror(rc));
  std::fflush(stderr);
  rrt_abort(RRT_COMM_WORLD, 1);  // ends the other ranks too; exit() covers a failed abort
  std::exit(1);
}

const char* title(const char* test) {
  static std::string text;
  text = std::string("rrt ") + test + " v" + std::to_string(RRT_VERSION_MAJOR) + "." +
         std::to_string(RRT_VERSION_MINOR);
  return text.c_str();
}

rrt_datatype_t rrtType(bench_dtype dtype) {
  switch (dtype) {
    case BENCH_CHAR: return RRT_CHAR;
    case BENCH_INT: return RRT_INT32;
    case BENCH_FLOAT: return RRT_FLOAT;
    case BENCH_DOUBLE: return RRT_DOUBLE;
    case BENCH_FP16: return RRT_FLOAT16;
    case BENCH_BF16: return RRT_BFLOAT16;
  }
  return RRT_BYTE;
}

const char* deviceUnavailable() {
  int on = 0;
  if (rrt_cuda_support(&on) != RRT_SUCCESS || !on)
    return "rrt has no CUDA support here (no GPU or driver, RRT_CUDA=off, or a build without CUDA)";
  return device_mem_open();
}

}  // namespace rrt::apps
