// rrt_gather: Gather latency, timed as OSU's osu_gather does (see common/coll_driver.h).
#include "common/rrt_coll_main.h"

using rrt::apps::check;
using rrt::apps::rrtType;

namespace {

void run(const coll_args* a) {
  rrt_datatype_t type = rrtType(a->dtype);
  check(rrt_gather(a->send, a->count, type, a->recv, a->count, type, 0, RRT_COMM_WORLD),
        "rrt_gather");
}

}  // namespace

int main(int argc, char** argv) {
  coll_bench bench{"rrt_gather",
                   rrt::apps::title("Gather Latency Test"),
                   BENCH_COLL,
                   COLL_ONE_BLOCK,
                   COLL_BLOCK_PER_RANK,
                   0,
                   run};
  return rrt::apps::collMain(argc, argv, bench);
}
