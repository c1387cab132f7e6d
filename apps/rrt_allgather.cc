// rrt_allgather: Allgather latency, timed as OSU's osu_allgather does (see common/coll_driver.h).
#include "common/rrt_coll_main.h"

using rrt::apps::check;
using rrt::apps::rrtType;

namespace {

void run(const coll_args* a) {
  rrt_datatype_t type = rrtType(a->dtype);
  check(rrt_allgather(a->send, a->count, type, a->recv, a->count, type, RRT_COMM_WORLD),
        "rrt_allgather");
}

}  // namespace

int main(int argc, char** argv) {
  coll_bench bench{"rrt_allgather",
                   rrt::apps::title("Allgather Latency Test"),
                   BENCH_COLL,
                   COLL_ONE_BLOCK,
                   COLL_BLOCK_PER_RANK,
                   0,
                   run};
  return rrt::apps::collMain(argc, argv, bench);
}
