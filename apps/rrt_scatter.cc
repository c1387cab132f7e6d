// rrt_scatter: Scatter latency, timed as OSU's osu_scatter does (see common/coll_driver.h).
#include "common/rrt_coll_main.h"

using rrt::apps::check;
using rrt::apps::rrtType;

namespace {

void run(const coll_args* a) {
  rrt_datatype_t type = rrtType(a->dtype);
  check(rrt_scatter(a->send, a->count, type, a->recv, a->count, type, 0, RRT_COMM_WORLD),
        "rrt_scatter");
}

}  // namespace

int main(int argc, char** argv) {
  coll_bench bench{"rrt_scatter",
                   rrt::apps::title("Scatter Latency Test"),
                   BENCH_COLL,
                   COLL_BLOCK_PER_RANK,
                   COLL_ONE_BLOCK,
                   0,
                   run};
  return rrt::apps::collMain(argc, argv, bench);
}
