// rrt_allreduce: Allreduce latency, timed as OSU's osu_allreduce does (see common/coll_driver.h).
#include "common/rrt_coll_main.h"

using rrt::apps::check;
using rrt::apps::rrtType;

namespace {

void run(const coll_args* a) {
  check(rrt_allreduce(a->send, a->recv, a->count, rrtType(a->dtype), RRT_SUM, RRT_COMM_WORLD),
        "rrt_allreduce");
}

}  // namespace

int main(int argc, char** argv) {
  coll_bench bench{"rrt_allreduce",
                   rrt::apps::title("Allreduce Latency Test"),
                   BENCH_COLL,
                   COLL_ONE_BLOCK,
                   COLL_ONE_BLOCK,
                   0,
                   run};
  return rrt::apps::collMain(argc, argv, bench);
}
