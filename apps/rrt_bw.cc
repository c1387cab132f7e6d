// rrt_bw: unidirectional bandwidth as OSU's osu_bw measures it: per round rank 0 posts a window
// of non-blocking sends, rank 1 a window of receives; both wait, then rank 1 sends a small ack.
#include <vector>

#include "common/rrt_pt2pt_main.h"

using rrt::apps::check;

namespace {

constexpr int kDataTag = 100;
constexpr int kAckTag = 101;

double measure(const pt2pt_args* a) {
  std::vector<rrt_request_t> reqs(a->window, RRT_REQUEST_NULL);
  double start = 0.0;
  for (size_t i = 0; i < a->skip + a->iters; ++i) {
    if (i == a->skip) start = rrt_wtime();
    if (a->rank == 0) {
      for (size_t w = 0; w < a->window; ++w)
        check(rrt_isend(a->send, a->size, RRT_BYTE, 1, kDataTag, RRT_COMM_WORLD, &reqs[w]),
              "rrt_isend");
      check(rrt_waitall(a->window, reqs.data(), RRT_STATUSES_IGNORE), "rrt_waitall");
      check(rrt_recv(a->recv, PT2PT_ACK_BYTES, RRT_BYTE, 1, kAckTag, RRT_COMM_WORLD,
                     RRT_STATUS_IGNORE),
            "rrt_recv(ack)");
    } else {
      for (size_t w = 0; w < a->window; ++w)
        check(rrt_irecv(a->recv, a->size, RRT_BYTE, 0, kDataTag, RRT_COMM_WORLD, &reqs[w]),
              "rrt_irecv");
      check(rrt_waitall(a->window, reqs.data(), RRT_STATUSES_IGNORE), "rrt_waitall");
      check(rrt_send(a->send, PT2PT_ACK_BYTES, RRT_BYTE, 0, kAckTag, RRT_COMM_WORLD),
            "rrt_send(ack)");
    }
  }
  double seconds = rrt_wtime() - start;
  return static_cast<double>(a->size) / 1e6 * static_cast<double>(a->iters * a->window) / seconds;
}

}  // namespace

int main(int argc, char** argv) {
  pt2pt_bench bench{"rrt_bw", rrt::apps::title("Bandwidth Test"), BENCH_BW, measure};
  return rrt::apps::pt2ptMain(argc, argv, bench);
}
