// rrt_bcast: Broadcast latency, timed as OSU's osu_bcast does (see common/coll_driver.h).
#include "common/rrt_coll_main.h"

using rrt::apps::check;
using rrt::apps::rrtType;

namespace {

void run(const coll_args* a) {
  check(rrt_bcast(a->send, a->count, rrtType(a->dtype), 0, RRT_COMM_WORLD), "rrt_bcast");
}

}  // namespace

int main(int argc, char** argv) {
  coll_bench bench{"rrt_bcast",
                   rrt::apps::title("Broadcast Latency Test"),
                   BENCH_COLL,
                   COLL_ONE_BLOCK,
                   COLL_ONE_BLOCK,
                   0,
                   run};
  return rrt::apps::collMain(argc, argv, bench);
}
