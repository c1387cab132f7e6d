// Runs the shared collective driver on rrt (see rrt_coll_main.h).
#include "rrt_coll_main.h"

namespace rrt::apps {
namespace {

double wtime() { return rrt_wtime(); }

void barrier() { check(rrt_barrier(RRT_COMM_WORLD), "rrt_barrier"); }

void reduceStats(double value, double* min, double* max, double* sum) {
  check(rrt_reduce(&value, min, 1, RRT_DOUBLE, RRT_MIN, 0, RRT_COMM_WORLD), "rrt_reduce(min)");
  check(rrt_reduce(&value, max, 1, RRT_DOUBLE, RRT_MAX, 0, RRT_COMM_WORLD), "rrt_reduce(max)");
  check(rrt_reduce(&value, sum, 1, RRT_DOUBLE, RRT_SUM, 0, RRT_COMM_WORLD), "rrt_reduce(sum)");
}

int dtypeSupported(bench_dtype) { return 1; }  // rrt has every -T type, fp16 and bf16 included

void abortJob() { rrt_abort(RRT_COMM_WORLD, 1); }

void* allocMem(size_t bytes) {
  void* p = nullptr;
  return rrt_alloc_mem(bytes, &p) == RRT_SUCCESS ? p : nullptr;
}

void freeMem(void* p) { check(rrt_free_mem(p), "rrt_free_mem"); }

}  // namespace

int collMain(int argc, char** argv, const coll_bench& bench) {
  setProgram(bench.program);
  check(rrt_init(&argc, &argv), "rrt_init");
  coll_runtime rt{};
  rt.type_prefix = "RRT_";
  check(rrt_comm_rank(RRT_COMM_WORLD, &rt.rank), "rrt_comm_rank");
  check(rrt_comm_size(RRT_COMM_WORLD, &rt.nranks), "rrt_comm_size");
  rt.wtime = wtime;
  rt.barrier = barrier;
  rt.reduce_stats = reduceStats;
  rt.dtype_supported = dtypeSupported;
  rt.abort_job = abortJob;
  rt.device_unavailable = deviceUnavailable;
  rt.alloc_mem = allocMem;
  rt.free_mem = freeMem;
  int code = coll_main(argc, argv, &rt, &bench);
  check(rrt_finalize(), "rrt_finalize");
  return code;
}

}  // namespace rrt::apps
