// rrt_bibw: bidirectional bandwidth as OSU's osu_bibw measures it: per round both ranks post a
// window of receives, then a window of sends, and wait for all; bytes count in both directions.
#include <vector>

#include "common/rrt_pt2pt_main.h"

using rrt::apps::check;

namespace {

constexpr int kTagToOne = 100;
constexpr int kTagToZero = 10;

double measure(const pt2pt_args* a) {
  std::vector<rrt_request_t> sends(a->window, RRT_REQUEST_NULL);
  std::vector<rrt_request_t> recvs(a->window, RRT_REQUEST_NULL);
  const int peer = 1 - a->rank;
  const int sendTag = a->rank == 0 ? kTagToOne : kTagToZero;
  const int recvTag = a->rank == 0 ? kTagToZero : kTagToOne;
  double start = 0.0;
  for (size_t i = 0; i < a->skip + a->iters; ++i) {
    if (i == a->skip) start = rrt_wtime();
    for (size_t w = 0; w < a->window; ++w)
      check(rrt_irecv(a->recv, a->size, RRT_BYTE, peer, recvTag, RRT_COMM_WORLD, &recvs[w]),
            "rrt_irecv");
    for (size_t w = 0; w < a->window; ++w)
      check(rrt_isend(a->send, a->size, RRT_BYTE, peer, sendTag, RRT_COMM_WORLD, &sends[w]),
            "rrt_isend");
    check(rrt_waitall(a->window, sends.data(), RRT_STATUSES_IGNORE), "rrt_waitall(send)");
    check(rrt_waitall(a->window, recvs.data(), RRT_STATUSES_IGNORE), "rrt_waitall(recv)");
  }
  double seconds = rrt_wtime() - start;
  return static_cast<double>(a->size) / 1e6 * static_cast<double>(a->iters * a->window) * 2.0 /
         seconds;
}

}  // namespace

int main(int argc, char** argv) {
  pt2pt_bench bench{"rrt_bibw", rrt::apps::title("Bi-Directional Bandwidth Test"), BENCH_BW,
                    measure};
  return rrt::apps::pt2ptMain(argc, argv, bench);
}
