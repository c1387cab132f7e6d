// rrt_reduce_scatter: Reduce_scatter latency, timed as OSU's osu_reduce_scatter does (see
// common/coll_driver.h).
#include "common/rrt_coll_main.h"

using rrt::apps::check;
using rrt::apps::rrtType;

namespace {

void run(const coll_args* a) {
  check(rrt_reduce_scatter(a->send, a->recv, a->counts, rrtType(a->dtype), RRT_SUM, RRT_COMM_WORLD),
        "rrt_reduce_scatter");
}

}  // namespace

int main(int argc, char** argv) {
  coll_bench bench{"rrt_reduce_scatter",
                   rrt::apps::title("Reduce_scatter Latency Test"),
                   BENCH_COLL,
                   COLL_ONE_BLOCK,
                   COLL_ONE_BLOCK,
                   1,
                   run};
  return rrt::apps::collMain(argc, argv, bench);
}
