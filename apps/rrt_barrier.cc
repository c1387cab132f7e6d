// rrt_barrier: Barrier latency, timed as OSU's osu_barrier does (see common/coll_driver.h).
#include "common/rrt_coll_main.h"

using rrt::apps::check;

namespace {

void run(const coll_args*) { check(rrt_barrier(RRT_COMM_WORLD), "rrt_barrier"); }

}  // namespace

int main(int argc, char** argv) {
  coll_bench bench{"rrt_barrier",
                   rrt::apps::title("Barrier Latency Test"),
                   BENCH_BARRIER,
                   COLL_ONE_BLOCK,
                   COLL_ONE_BLOCK,
                   0,
                   run};
  return rrt::apps::collMain(argc, argv, bench);
}
